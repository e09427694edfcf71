package target

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// cacheReadTimeout bounds a read from the informers: the first read of a
// kind starts its informer and waits for it to sync, which never happens if
// the API server refuses the watch.
const cacheReadTimeout = 30 * time.Second

// CachedReader reads from informers the kinds the controller may list and
// watch cluster-wide, and everything else live. It serves the local cluster
// as the controller's own identity only: a target reached by impersonation
// or through spec.kubeConfig reads live, as that identity, so the cache
// never shows a tenant what its own rights would not.
//
// Only object kinds (read as unstructured) and the metadata of Helm's
// release Secrets (PartialObjectMetadata, cached with the owner=helm label
// selector) come from informers. Secret data is always read live.
type CachedReader struct {
	// Cache is the informer cache (controller-runtime's cache.Cache).
	Cache client.Reader
	// Live reads what the cache does not hold.
	Live client.Reader
	// Kinds are the group kinds read from Cache. SetKinds changes them
	// while passes run.
	Kinds map[schema.GroupKind]bool
	// SecretMetadata is true when Cache holds release Secrets' metadata.
	SecretMetadata bool

	mu sync.RWMutex
	// read are the kinds and versions read from Cache so far: each has an
	// informer, which SetKinds' caller removes when its kind goes.
	read sync.Map
}

// SetKinds replaces the group kinds read from Cache, and returns the kinds
// and versions of the informers that served a kind no longer in kinds: the
// caller removes them, since the cluster stopped serving the kind (or the
// controller may no longer list and watch it) and their reflectors would
// fail for ever.
func (r *CachedReader) SetKinds(kinds []schema.GroupKind) []schema.GroupVersionKind {
	next := make(map[schema.GroupKind]bool, len(kinds))
	for _, gk := range kinds {
		next[gk] = true
	}
	r.mu.Lock()
	r.Kinds = next
	r.mu.Unlock()
	var gone []schema.GroupVersionKind
	r.read.Range(func(k, _ any) bool {
		if gvk := k.(schema.GroupVersionKind); !next[gvk.GroupKind()] {
			gone = append(gone, gvk)
			r.read.Delete(k)
		}
		return true
	})
	return gone
}

var _ client.Reader = &CachedReader{}

// Get implements client.Reader.
func (r *CachedReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if !r.cached(obj) {
		return r.Live.Get(ctx, key, obj, opts...)
	}
	return r.getCached(ctx, key, obj, opts...)
}

// List implements client.Reader.
func (r *CachedReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if !r.cached(list) {
		return r.Live.List(ctx, list, opts...)
	}
	return r.listCached(ctx, list, opts...)
}

// getCached and listCached read from the informers, for a kind cached
// reports held.
func (r *CachedReader) getCached(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	ctx, cancel := context.WithTimeout(ctx, cacheReadTimeout)
	defer cancel()
	if err := r.Cache.Get(ctx, key, obj, opts...); err != nil {
		return fmt.Errorf("from the informer cache: %w", err)
	}
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return Expand(u)
	}
	return nil
}

func (r *CachedReader) listCached(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	ctx, cancel := context.WithTimeout(ctx, cacheReadTimeout)
	defer cancel()
	if err := r.Cache.List(ctx, list, opts...); err != nil {
		return fmt.Errorf("from the informer cache: %w", err)
	}
	if l, ok := list.(*unstructured.UnstructuredList); ok {
		for i := range l.Items {
			if err := Expand(&l.Items[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// cached reports whether obj (an object or a list) is read from the cache.
func (r *CachedReader) cached(obj runtime.Object) bool {
	gvk := obj.GetObjectKind().GroupVersionKind()
	gk := schema.GroupKind{Group: gvk.Group, Kind: strings.TrimSuffix(gvk.Kind, "List")}
	switch obj.(type) {
	case *unstructured.Unstructured, *unstructured.UnstructuredList:
		r.mu.RLock()
		ok := r.Kinds[gk]
		r.mu.RUnlock()
		if ok {
			if _, seen := r.read.Load(gk.WithVersion(gvk.Version)); !seen {
				r.read.Store(gk.WithVersion(gvk.Version), true)
			}
		}
		return ok
	case *metav1.PartialObjectMetadata, *metav1.PartialObjectMetadataList:
		return r.SecretMetadata && gk == schema.GroupKind{Kind: "Secret"}
	}
	return false
}
