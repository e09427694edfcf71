package render

import (
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// restGetter gives Helm's kube client a cluster from a rest.Config, with
// namespace as its default namespace, as helm-controller gives it one from
// the HelmRelease's target.
type restGetter struct {
	cfg       *rest.Config
	namespace string
	discovery discovery.CachedDiscoveryInterface
}

func newRESTGetter(cfg *rest.Config, namespace string) (*restGetter, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &restGetter{cfg: cfg, namespace: namespace, discovery: memory.NewMemCacheClient(dc)}, nil
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
