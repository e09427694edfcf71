package render

import (
	"sync"

	"helm.sh/helm/v4/pkg/kube"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/kubectl/pkg/validation"
)

// restGetter gives Helm's kube client a cluster from a rest.Config, with
// namespace as its default namespace, as helm-controller gives it one from
// the HelmRelease's target.
type restGetter struct {
	cfg       *rest.Config
	namespace string
	discovery discovery.CachedDiscoveryInterface
}

func newRESTGetter(cfg *rest.Config, namespace string, shared *Cluster) (*restGetter, error) {
	if shared == nil {
		var err error
		if shared, err = NewCluster(cfg); err != nil {
			return nil, err
		}
	}
	return &restGetter{cfg: cfg, namespace: namespace, discovery: shared.discovery}, nil
}

// Cluster is what the renders of a fleet on one cluster share: its
// discovery (the API server's groups and versions, read once), and the
// validators Helm's kube client checks each manifest with, which keep what
// they learnt of the server's OpenAPI (a validator made afresh fetches and
// parses the OpenAPI document of every group version again, the larger
// part of a render's own CPU).
type Cluster struct {
	discovery  discovery.CachedDiscoveryInterface
	mu         sync.Mutex
	validators map[string]validation.Schema
}

// NewCluster is the shared part of the renders on cfg's cluster.
func NewCluster(cfg *rest.Config) (*Cluster, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &Cluster{discovery: memory.NewMemCacheClient(dc), validators: map[string]validation.Schema{}}, nil
}

// sharedValidators is Helm's kube client factory with the Cluster's
// validators. Renders of one Cluster may run side by side (a fleet's
// previews, --parallel): each validator is built once, under mu.
type sharedValidators struct {
	kube.Factory
	cluster *Cluster
}

func (f sharedValidators) Validator(directive string) (validation.Schema, error) {
	f.cluster.mu.Lock()
	defer f.cluster.mu.Unlock()
	if v, ok := f.cluster.validators[directive]; ok {
		return v, nil
	}
	v, err := f.Factory.Validator(directive)
	if err != nil {
		return nil, err
	}
	f.cluster.validators[directive] = v
	return v, nil
}
func (g *restGetter) ToRESTConfig() (*rest.Config, error) { return rest.CopyConfig(g.cfg), nil }

func (g *restGetter) ToDiscoveryClient() (discovery.CachedDiscoveryInterface, error) {
	return g.discovery, nil
}

func (g *restGetter) ToRESTMapper() (apimeta.RESTMapper, error) {
	return restmapper.NewShortcutExpander(restmapper.NewDeferredDiscoveryRESTMapper(g.discovery), g.discovery, nil), nil
}

func (g *restGetter) ToRawKubeConfigLoader() clientcmd.ClientConfig {
	return clientcmd.NewDefaultClientConfig(*clientcmdapi.NewConfig(),
		&clientcmd.ConfigOverrides{Context: clientcmdapi.Context{Namespace: g.namespace}})
}
