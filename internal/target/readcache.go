package target

import (
	"fmt"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/internal/manifest"
)

// NewReadCache builds the informers a pass reads the local cluster from,
// when it reads as the controller's own identity (no impersonation): the
// template kinds whole but compact (Compact), the consumer and user
// kinds and the Clusters slimmed to what a pass reads of them
// (SlimTransform), in every namespace, the metadata only of Helm's
// release Secrets, selected by Helm's owner=helm label, and the metadata only of
// CustomResourceDefinitions (for ServedKinds). Secret data is never
// cached. Informers start on a kind's first read; the cache runs with the
// manager. The watches of the template and consumer kinds use the same
// informers. read are the kinds the controller may list and watch
// cluster-wide; secretMetadata and crds whether it may list and watch the
// Secrets' and the CRDs' metadata. It returns nil, and passes read live,
// when the controller may list and watch none of them.
func NewReadCache(mgr ctrl.Manager, read []schema.GroupKind, secretMetadata, crds bool, templates *manifest.KindMatcher, mapper apimeta.RESTMapper) (*CachedReader, ctrlcache.Cache, error) {
	if len(read) == 0 && !secretMetadata && !crds {
		return nil, nil, nil
	}
	c, err := newInformerCache(mgr, templates, mapper)
	if err != nil {
		return nil, nil, err
	}
	if err := mgr.Add(c); err != nil {
		return nil, nil, fmt.Errorf("failed to run the read cache: %w", err)
	}
	kinds := map[schema.GroupKind]bool{}
	for _, gk := range read {
		kinds[gk] = true
	}
	return &CachedReader{Cache: c, Live: mgr.GetAPIReader(), Kinds: kinds, SecretMetadata: secretMetadata}, c, nil
}

// newInformerCache builds the informer cache of the read cache.
func newInformerCache(mgr ctrl.Manager, templates *manifest.KindMatcher, mapper apimeta.RESTMapper) (ctrlcache.Cache, error) {
	secretMeta := &metav1.PartialObjectMetadata{}
	secretMeta.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: "Secret"})
	c, err := ctrlcache.New(mgr.GetConfig(), ctrlcache.Options{
		Scheme: mgr.GetScheme(),
		// The passes' mapper: it remembers the kinds the cluster does not
		// serve, and forgets them when a CRD changes (servedKinds).
		Mapper: mapper,
		// No pass reads managedFields; without them an object takes about
		// half the memory. Of the Clusters, consumers and holders, a pass
		// reads only the metadata and the template references (and
		// spec.paused): the rest, status included, is not kept.
		DefaultTransform: SlimTransform(isTemplate(templates)),
		ByObject: map[client.Object]ctrlcache.ByObject{
			secretMeta: {Label: labels.SelectorFromSet(labels.Set{"owner": "helm"})},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("failed to create the read cache: %w", err)
	}
	return c, nil
}

// isTemplate reports whether a group kind is a template kind; with no
// matcher, every kind is kept whole.
func isTemplate(m *manifest.KindMatcher) func(schema.GroupKind) bool {
	return func(gk schema.GroupKind) bool { return m == nil || m.Match(gk) }
}
