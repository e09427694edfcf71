package framework

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/templatedrift/template-drift-controller/internal/testenv"
)

// Binaries are the paths of the tools the suite runs, built by hack/.
type Binaries struct {
	HelmController, SourceController, Flux, Addon string
	// SourceCRDs is source-controller's CRD folder.
	SourceCRDs string
}

// DefaultBinaries resolves the binaries under bin/ for hack/versions.env.
func DefaultBinaries() (Binaries, error) {
	root, err := testenv.RepoRoot()
	if err != nil {
		return Binaries{}, err
	}
	v, err := testenv.Versions(root)
	if err != nil {
		return Binaries{}, err
	}
	bin := filepath.Join(root, "bin")
	b := Binaries{
		HelmController:   filepath.Join(bin, "helm-controller", v["HELM_CONTROLLER_VERSION"], "helm-controller"),
		SourceController: filepath.Join(bin, "source-controller", v["FLUX_SOURCE_CONTROLLER_VERSION"], "source-controller"),
		Flux:             filepath.Join(bin, "flux", v["FLUX_CLI_VERSION"], "flux"),
		Addon:            filepath.Join(bin, "template-drift-controller"),
		SourceCRDs:       filepath.Join(bin, "crds", "source-controller", v["FLUX_SOURCE_CONTROLLER_VERSION"]),
	}
	for _, f := range []string{b.HelmController, b.SourceController, b.Flux, b.Addon, b.SourceCRDs} {
		if _, err := os.Stat(f); err != nil {
			return Binaries{}, fmt.Errorf("%s is missing: run `make e2e`, which builds it: %w", f, err)
		}
	}
	return b, nil
}

// Flux is helm-controller and source-controller running against one
// control plane.
type Flux struct {
	Source, Helm *Process
}

// StartFlux starts both controllers with loopback ports (their defaults
// collide), a storage folder, and the cluster's kubeconfig, and waits until
// both serve.
func StartFlux(name string, env *testenv.Env, b Binaries, artifacts string) (*Flux, error) {
	storage, err := os.MkdirTemp("", "tdc-e2e-storage-")
	if err != nil {
		return nil, err
	}
	vars := []string{"KUBECONFIG=" + env.KubeConfigPath, "RUNTIME_NAMESPACE=flux-system"}
	src, err := StartServing(name+"-source-controller", b.SourceController, 3, 1, func(a []string) []string {
		return []string{"--metrics-addr=" + a[0], "--health-addr=" + a[1], "--storage-path=" + storage,
			"--storage-addr=" + a[2], "--storage-adv-addr=" + a[2], "--log-level=debug"}
	}, vars, artifacts)
	if err != nil {
		return nil, err
	}
	helm, err := StartServing(name+"-helm-controller", b.HelmController, 2, 1, func(a []string) []string {
		return []string{"--metrics-addr=" + a[0], "--health-addr=" + a[1], "--log-level=debug"}
	}, vars, artifacts)
	if err != nil {
		src.Stop()
		return nil, err
	}
	return &Flux{Source: src, Helm: helm}, nil
}

// Stop stops both controllers.
func (f *Flux) Stop() {
	if f == nil {
		return
	}
	f.Helm.Stop()
	f.Source.Stop()
}

// StartAddon runs the add-on binary against env and waits until it serves.
func StartAddon(name string, env *testenv.Env, b Binaries, artifacts string) (*Process, error) {
	return StartServing(name, b.Addon, 2, 1, func(a []string) []string {
		return []string{"--metrics-addr=" + a[0], "--health-addr=" + a[1], "--log-level=debug"}
	}, []string{"KUBECONFIG=" + env.KubeConfigPath}, artifacts)
}
