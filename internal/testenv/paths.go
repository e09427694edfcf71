package testenv

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ErrNotProvisioned is returned when the control-plane binaries or CRDs have
// not been built yet; `make testbin` builds them.
var ErrNotProvisioned = errors.New("test control plane not provisioned: run `make testbin`")

// RepoRoot finds the repository root by walking up from the working directory
// to the folder holding go.mod, so tests work from any package directory.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("failed to get working directory: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("failed to find go.mod above the working directory")
		}
		dir = parent
	}
}

// Versions reads hack/versions.env, the single place that pins the versions
// of the tools the tests build.
func Versions(root string) (map[string]string, error) {
	f, err := os.Open(filepath.Join(root, "hack", "versions.env"))
	if err != nil {
		return nil, fmt.Errorf("failed to read tool versions: %w", err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("failed to parse %q in hack/versions.env", line)
		}
		out[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return out, sc.Err()
}

// Paths are the binaries and CRD folders a control plane is started from.
type Paths struct {
	// APIServer is the kube-apiserver binary.
	APIServer string
	// Etcd is the etcd binary.
	Etcd string
	// CRDDirs are folders of upstream CRDs (Flux and Cluster API).
	CRDDirs []string
	// KubeVersion and EtcdVersion are the pinned versions of the binaries.
	KubeVersion, EtcdVersion string
	// BinDir is the bin/ folder everything was resolved in.
	BinDir string

	versions map[string]string
}

// DefaultPaths resolves the binaries under bin/ for the pinned versions, and
// fails with ErrNotProvisioned when any is missing.
func DefaultPaths() (Paths, error) {
	root, err := RepoRoot()
	if err != nil {
		return Paths{}, err
	}
	v, err := Versions(root)
	if err != nil {
		return Paths{}, err
	}
	bin := filepath.Join(root, "bin")
	if b := os.Getenv("BIN_DIR"); b != "" {
		bin = b
	}
	p := Paths{
		APIServer:   filepath.Join(bin, "kube", v["KUBE_VERSION"], "kube-apiserver"),
		Etcd:        filepath.Join(bin, "etcd", v["ETCD_VERSION"], "etcd"),
		KubeVersion: v["KUBE_VERSION"],
		EtcdVersion: v["ETCD_VERSION"],
		BinDir:      bin,
		versions:    v,
		CRDDirs: []string{
			filepath.Join(bin, "crds", "helm-controller", v["HELM_CONTROLLER_VERSION"]),
			filepath.Join(bin, "crds", "kustomize-controller", v["KUSTOMIZE_CONTROLLER_VERSION"]),
			filepath.Join(bin, "crds", "cluster-api", v["CAPI_VERSION"]),
		},
	}
	for _, f := range append([]string{p.APIServer, p.Etcd}, p.CRDDirs...) {
		if _, err := os.Stat(f); err != nil {
			return Paths{}, fmt.Errorf("%w: %s is missing", ErrNotProvisioned, f)
		}
	}
	return p, nil
}
