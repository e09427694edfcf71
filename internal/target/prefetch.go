package target

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
)

// Prefetch starts the informer of gvk, when its kind is read from Cache,
// without waiting for its initial list. The first read of a kind otherwise
// starts its informer and waits for that list, so a pass that reads the
// kinds only it lists (MachineSets, Metal3DataClaims, Metal3Data), one
// after another, waits for their lists in turn; started when the pass
// names its kinds (Target.GetEach, ListEach), they load beside its
// other reads. The informer is recorded as read, so SetKinds' caller
// removes it if its kind goes. A Cache that cannot start informers (a
// plain reader) is left alone.
func (r *CachedReader) Prefetch(gvk schema.GroupVersionKind) error {
	r.mu.RLock()
	cached := r.Kinds[gvk.GroupKind()]
	r.mu.RUnlock()
	informers, canStart := r.Cache.(ctrlcache.Informers)
	if !cached || !canStart {
		return nil
	}
	if _, started := r.read.Load(gvk); started {
		return nil
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	// Without waiting for the sync, GetInformer does not use its context:
	// the informer runs for as long as the cache does.
	if _, err := informers.GetInformer(context.Background(), u, ctrlcache.BlockUntilSynced(false)); err != nil {
		return fmt.Errorf("failed to start the informer of %s: %w", gvk, err)
	}
	r.read.Store(gvk, true)
	return nil
}
