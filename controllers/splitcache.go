package controllers

import (
	"context"
	"errors"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// splitCache is the read cache of a controller started with
// --object-label-selector: the kinds a release renders (templates,
// consumers, Clusters: narrowed) come from informers that list and watch
// only the objects the selector matches, and every other kind (the holders
// Cluster API and CAPM3 create, RBAC, CRDs, Secrets' metadata) from
// informers that hold them all.
//
// It exists because a shard of a sharded deployment otherwise holds every
// shard's templates: a label selector is the only filter an API server
// applies to the list and watch of a custom resource, and controller-runtime
// applies one cache's default selector to every kind, holders included,
// whose objects carry no release's labels.
type splitCache struct {
	whole, narrow ctrlcache.Cache
	// narrowed reports the group kinds served by narrow.
	narrowed func(schema.GroupKind) bool
}

var _ ctrlcache.Cache = &splitCache{}

// pick returns the cache that serves obj (an object or a list): narrow for
// the unstructured objects of a narrowed kind, whole for everything else.
func (s *splitCache) pick(obj runtime.Object) ctrlcache.Cache {
	switch obj.(type) {
	case *unstructured.Unstructured, *unstructured.UnstructuredList:
		return s.pickKind(obj.GetObjectKind().GroupVersionKind())
	}
	return s.whole
}

func (s *splitCache) pickKind(gvk schema.GroupVersionKind) ctrlcache.Cache {
	if s.narrowed(schema.GroupKind{Group: gvk.Group, Kind: strings.TrimSuffix(gvk.Kind, "List")}) {
		return s.narrow
	}
	return s.whole
}

// Get implements client.Reader.
func (s *splitCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	return s.pick(obj).Get(ctx, key, obj, opts...)
}

// List implements client.Reader.
func (s *splitCache) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return s.pick(list).List(ctx, list, opts...)
}

// GetInformer implements ctrlcache.Informers.
func (s *splitCache) GetInformer(ctx context.Context, obj client.Object, opts ...ctrlcache.InformerGetOption) (ctrlcache.Informer, error) {
	return s.pick(obj).GetInformer(ctx, obj, opts...)
}

// GetInformerForKind implements ctrlcache.Informers. A typed kind asked for
// by its kind alone is served by whole, as pick serves typed objects.
func (s *splitCache) GetInformerForKind(ctx context.Context, gvk schema.GroupVersionKind, opts ...ctrlcache.InformerGetOption) (ctrlcache.Informer, error) {
	return s.pickKind(gvk).GetInformerForKind(ctx, gvk, opts...)
}

// RemoveInformer implements ctrlcache.Informers.
func (s *splitCache) RemoveInformer(ctx context.Context, obj client.Object) error {
	return s.pick(obj).RemoveInformer(ctx, obj)
}

// IndexField implements client.FieldIndexer.
func (s *splitCache) IndexField(ctx context.Context, obj client.Object, field string, extract client.IndexerFunc) error {
	return s.pick(obj).IndexField(ctx, obj, field, extract)
}

// Start runs both caches until ctx ends or one of them stops: a cache that
// stops early stops the other, so the manager sees the failure.
func (s *splitCache) Start(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make(chan error, 2)
	for _, c := range []ctrlcache.Cache{s.whole, s.narrow} {
		go func() {
			errs <- c.Start(ctx)
			cancel()
		}()
	}
	return errors.Join(<-errs, <-errs)
}

// WaitForCacheSync implements ctrlcache.Informers.
func (s *splitCache) WaitForCacheSync(ctx context.Context) bool {
	return s.whole.WaitForCacheSync(ctx) && s.narrow.WaitForCacheSync(ctx)
}
