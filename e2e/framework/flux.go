package framework

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/templatedrift/template-drift-controller/internal/testenv"
)

// Binaries are the paths of the tools the suite runs, built by hack/.
type Binaries struct {
	HelmController, SourceController, NotificationController, KustomizeController, Flux, Addon string
	// CLI is templatedrift, the add-on's CLI.
	CLI string
	// ReleaseTool is hack/release: it packages and pushes the add-on's
	// chart as `make release` does.
	ReleaseTool string
	// SourceCRDs and NotificationCRDs are source-controller's and
	// notification-controller's CRD folders.
	SourceCRDs, NotificationCRDs string
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
		NotificationController: filepath.Join(bin, "notification-controller", v["NOTIFICATION_CONTROLLER_VERSION"],
			"notification-controller"),
		KustomizeController: filepath.Join(bin, "kustomize-controller", v["KUSTOMIZE_CONTROLLER_VERSION"], "kustomize-controller"),
		Flux:                filepath.Join(bin, "flux", v["FLUX_CLI_VERSION"], "flux"),
		Addon:               filepath.Join(bin, "template-drift-controller"),
		CLI:                 filepath.Join(bin, "templatedrift"),
		ReleaseTool:         filepath.Join(bin, "release-tool"),
		SourceCRDs:          filepath.Join(bin, "crds", "source-controller", v["FLUX_SOURCE_CONTROLLER_VERSION"]),
		NotificationCRDs:    filepath.Join(bin, "crds", "notification-controller", v["NOTIFICATION_CONTROLLER_VERSION"]),
	}
	for _, f := range []string{b.HelmController, b.SourceController, b.NotificationController, b.KustomizeController, b.Flux, b.Addon, b.CLI, b.ReleaseTool, b.SourceCRDs, b.NotificationCRDs} {
		if _, err := os.Stat(f); err != nil {
			return Binaries{}, fmt.Errorf("%s is missing: run `make e2e`, which builds it: %w", f, err)
		}
	}
	return b, nil
}

// Flux is source-controller, notification-controller and helm-controller
// running against one control plane, and kustomize-controller once
// StartKustomize has started it.
type Flux struct {
	Source, Notification, Helm, Kustomize *Process
	// EventsURL is notification-controller's event receiver, which
	// helm-controller sends its events to (--events-addr).
	EventsURL string
}

// StartFlux starts the three controllers with loopback ports (their
// defaults collide), a storage folder, and the cluster's kubeconfig, and
// waits until each serves. helm-controller sends its events to
// notification-controller, as in a Flux installation.
func StartFlux(name string, env *testenv.Env, b Binaries, artifacts string) (*Flux, error) {
	storage, err := os.MkdirTemp("", "tdc-e2e-storage-")
	if err != nil {
		return nil, err
	}
	vars := []string{"KUBECONFIG=" + env.KubeConfigPath, "RUNTIME_NAMESPACE=flux-system"}
	f := &Flux{}
	f.Source, err = StartServing(name+"-source-controller", b.SourceController, 3, 1, func(a []string) []string {
		return []string{"--metrics-addr=" + a[0], "--health-addr=" + a[1], "--storage-path=" + storage,
			"--storage-addr=" + a[2], "--storage-adv-addr=" + a[2], "--log-level=debug"}
	}, vars, artifacts)
	if err != nil {
		return nil, err
	}
	f.Notification, err = StartServing(name+"-notification-controller", b.NotificationController, 4, 1, func(a []string) []string {
		f.EventsURL = "http://" + a[2] + "/"
		return []string{"--metrics-addr=" + a[0], "--health-addr=" + a[1], "--events-addr=" + a[2],
			"--receiverAddr=" + a[3], "--log-level=debug"}
	}, vars, artifacts)
	if err != nil {
		f.Stop()
		return nil, err
	}
	f.Helm, err = StartServing(name+"-helm-controller", b.HelmController, 2, 1, func(a []string) []string {
		return []string{"--metrics-addr=" + a[0], "--health-addr=" + a[1], "--events-addr=" + f.EventsURL, "--log-level=debug"}
	}, vars, artifacts)
	if err != nil {
		f.Stop()
		return nil, err
	}
	return f, nil
}

// StartKustomize starts kustomize-controller beside the others, sending
// its events to notification-controller, as in a Flux installation.
func (f *Flux) StartKustomize(name string, env *testenv.Env, b Binaries, artifacts string) error {
	vars := []string{"KUBECONFIG=" + env.KubeConfigPath, "RUNTIME_NAMESPACE=flux-system"}
	var err error
	f.Kustomize, err = StartServing(name+"-kustomize-controller", b.KustomizeController, 2, 1, func(a []string) []string {
		return []string{"--metrics-addr=" + a[0], "--health-addr=" + a[1], "--events-addr=" + f.EventsURL, "--log-level=debug"}
	}, vars, artifacts)
	return err
}

// Processes returns the controllers that were started, for logs.
func (f *Flux) Processes() []*Process {
	if f == nil {
		return nil
	}
	var out []*Process
	for _, p := range []*Process{f.Kustomize, f.Helm, f.Notification, f.Source} {
		if p != nil {
			out = append(out, p)
		}
	}
	return out
}

// Stop stops the controllers. It is safe to call on nil and more than once.
func (f *Flux) Stop() {
	for _, p := range f.Processes() {
		p.Stop()
	}
}
