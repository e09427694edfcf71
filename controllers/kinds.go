package controllers

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"

	"github.com/templatedrift/template-drift-controller/internal/pair"
)

// ResolveWatchKinds asks the API server which of the template kinds and
// consumer kinds it serves, at their preferred versions. Kinds installed
// later are not watched; the periodic resync still covers them.
func ResolveWatchKinds(cfg *rest.Config, kinds *pair.KindMatcher) ([]schema.GroupVersionKind, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("failed to create discovery client: %w", err)
	}
	lists, err := dc.ServerPreferredResources()
	if err != nil && len(lists) == 0 {
		return nil, fmt.Errorf("failed to discover API resources: %w", err)
	}
	var out []schema.GroupVersionKind
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			gk := schema.GroupKind{Group: gv.Group, Kind: r.Kind}
			if (kinds.Match(gk) || pair.IsConsumer(gk)) && gk != pair.MachineSetKind && !strings.Contains(r.Name, "/") {
				out = append(out, gv.WithKind(r.Kind))
			}
		}
	}
	return out, nil
}
