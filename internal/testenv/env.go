package testenv

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// DefaultStartTimeout is generous on purpose: a loaded 2-core machine can take
// far longer than the 3-4 s a control plane usually needs.
const DefaultStartTimeout = 90 * time.Second

// Env is one running control plane.
type Env struct {
	// Name tells environments apart in logs and kubeconfig file names.
	Name string
	// Config is an admin rest.Config for the API server.
	Config *rest.Config
	// Client is an uncached client with Scheme (watches included, so tests
	// can wrap it with controller-runtime's interceptor).
	Client client.WithWatch
	// KubeConfigPath is a kubeconfig file for external tools (kubectl, flux,
	// controllers run as processes). It is removed by Stop.
	KubeConfigPath string
	// Paths are the binaries the environment runs.
	Paths Paths
	// Omitted are the CRDs Options.OmitKinds left out, for a test to
	// install later.
	Omitted []*apiextensionsv1.CustomResourceDefinition

	env *envtest.Environment
	dir string
	// managers are the Cluster API and Metal3 managers, when Options.Managers,
	// and webhookPorts their webhook ports by provider name.
	managers     []*Process
	webhookPorts map[string]string
	// certDir is the API server's certificate folder once RestartAPIServer
	// has taken it over from envtest; Stop removes it.
	certDir string
}

// Scheme returns a scheme with the built-in types and Flux's HelmRelease
// and Kustomization.
// Cluster API and Metal3 objects are handled as unstructured, as the
// controller handles them.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(s)
	_ = apiextensionsv1.AddToScheme(s)
	_ = helmv2.AddToScheme(s)
	_ = kustomizev1.AddToScheme(s)
	return s
}

// Options tune a control plane.
type Options struct {
	// ExtraCRDDirs are more folders of CRDs to install (the e2e suite adds
	// source-controller's).
	ExtraCRDDirs []string
	// Managers runs the real Cluster API (core, kubeadm bootstrap, kubeadm
	// control plane) and Metal3 managers against the control plane, with the
	// providers' own CRDs and their conversion, defaulting and validating
	// webhooks, as `clusterctl init` would install them. Without it (or
	// ProviderCRDs), the Cluster API CRDs are installed without conversion
	// and there are no Metal3 kinds at all.
	Managers bool
	// ProviderCRDs installs the CRDs of the providers Managers runs, from
	// the same files and labelled the same way, without running the
	// managers (implied by Managers): the kinds of a management cluster
	// without their webhooks, so multi-version kinds convert with the None
	// strategy (only apiVersion changes). The scale benchmark uses it,
	// where the managers' CPU would drown the figures.
	ProviderCRDs bool
	// OmitKinds are kinds whose CRDs are left out, as on a management
	// cluster without those providers (no RKE2 on a kubeadm cluster, no
	// Metal3 kinds on another infrastructure). Kind is a path.Match
	// pattern: {Group: "metal3.io", Kind: "*"} leaves out a whole group. Env.Omitted keeps them, to
	// install one later. Managers need their own kinds: do not omit those.
	OmitKinds []schema.GroupKind
	// APIServerFlags are more kube-apiserver flags, by name without the
	// leading dashes (the scale benchmark turns the audit log on with
	// them). They are set after envtest's defaults, so they win over them.
	APIServerFlags map[string]string
}

// Start starts a control plane named name with every test CRD installed.
func Start(name string) (*Env, error) { return StartWith(name, Options{}) }

// StartWith starts a control plane with options.
func StartWith(name string, opts Options) (*Env, error) {
	paths, err := DefaultPaths()
	if err != nil {
		return nil, err
	}
	var provs []provider
	if opts.Managers || opts.ProviderCRDs {
		if provs, err = providers(paths.BinDir, paths.versions); err != nil {
			return nil, err
		}
	}
	reapOrphans(append([]string{paths.APIServer, paths.Etcd}, managerBinaries(provs)...)...)
	provCRDs, crdsOf, err := providerCRDs(provs)
	if err != nil {
		return nil, err
	}
	base, err := LoadCRDs(append(append([]string{}, paths.CRDDirs...), opts.ExtraCRDDirs...))
	if err != nil {
		return nil, err
	}
	crds, omitted := omit(firstByName(append(provCRDs, base...)), opts.OmitKinds)
	timeout := DefaultStartTimeout
	if v := os.Getenv("KUBEBUILDER_CONTROLPLANE_START_TIMEOUT"); v != "" {
		if d, err := time.ParseDuration(v); err == nil {
			timeout = d
		}
	}
	te := &envtest.Environment{
		CRDs:                     crds,
		ErrorIfCRDPathMissing:    true,
		ControlPlaneStartTimeout: timeout,
		ControlPlaneStopTimeout:  30 * time.Second,
		Scheme:                   Scheme(),
	}
	te.ControlPlane.APIServer = &envtest.APIServer{Path: paths.APIServer}
	for flag, value := range opts.APIServerFlags {
		te.ControlPlane.APIServer.Configure().Set(flag, value)
	}
	te.ControlPlane.Etcd = &envtest.Etcd{Path: paths.Etcd}
	// envtest only writes kubeconfigs for kubectl, and runs none: no
	// kubectl binary is built (point your own at KubeConfigPath).
	cfg, err := te.Start()
	if err != nil {
		return nil, fmt.Errorf("failed to start control plane %q: %w", name, err)
	}
	e := &Env{Name: name, Config: cfg, Paths: paths, env: te, Omitted: omitted}
	if err := e.init(); err != nil {
		_ = te.Stop()
		return nil, err
	}
	if opts.Managers {
		if err := e.startManagers(context.Background(), provs, crdsOf); err != nil {
			_ = e.Stop()
			return nil, fmt.Errorf("failed to run the Cluster API and Metal3 managers on %q: %w", name, err)
		}
	}
	return e, nil
}

func (e *Env) init() error {
	c, err := client.NewWithWatch(e.Config, client.Options{Scheme: e.env.Scheme})
	if err != nil {
		return fmt.Errorf("failed to create client for %q: %w", e.Name, err)
	}
	e.Client = c
	dir, err := os.MkdirTemp("", "tdc-testenv-"+e.Name+"-")
	if err != nil {
		return fmt.Errorf("failed to create kubeconfig folder: %w", err)
	}
	e.dir = dir
	user, err := e.env.ControlPlane.AddUser(envtest.User{Name: "admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return fmt.Errorf("failed to add admin user to %q: %w", e.Name, err)
	}
	kc, err := user.KubeConfig()
	if err != nil {
		return fmt.Errorf("failed to render kubeconfig of %q: %w", e.Name, err)
	}
	e.KubeConfigPath = filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(e.KubeConfigPath, kc, 0o600); err != nil {
		return fmt.Errorf("failed to write kubeconfig of %q: %w", e.Name, err)
	}
	return nil
}

// Stop stops the API server and etcd and removes the kubeconfig. It is safe
// to call more than once.
func (e *Env) Stop() error {
	if e == nil || e.env == nil {
		return nil
	}
	e.stopManagers()
	err := e.env.Stop()
	e.env = nil
	if e.dir != "" {
		_ = os.RemoveAll(e.dir)
	}
	if e.certDir != "" {
		_ = os.RemoveAll(e.certDir)
	}
	if err != nil {
		return fmt.Errorf("failed to stop control plane %q: %w", e.Name, err)
	}
	return nil
}

// omit splits crds into those kept and those of a kind in kinds.
func omit(crds []*apiextensionsv1.CustomResourceDefinition, kinds []schema.GroupKind) (kept, omitted []*apiextensionsv1.CustomResourceDefinition) {
	for _, crd := range crds {
		if slices.ContainsFunc(kinds, func(gk schema.GroupKind) bool {
			ok, _ := path.Match(gk.Kind, crd.Spec.Names.Kind)
			return gk.Group == crd.Spec.Group && ok
		}) {
			omitted = append(omitted, crd)
			continue
		}
		kept = append(kept, crd)
	}
	return kept, omitted
}
