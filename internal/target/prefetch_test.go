package target

import (
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/cache/informertest"
)

// TestPrefetch: a kind read from the cache has its informer started once,
// without a read, and is then among the informers SetKinds hands back when
// the kind goes; a kind read live, and a cache that cannot start
// informers, start nothing.
func TestPrefetch(t *testing.T) {
	g := NewWithT(t)
	ms := schema.GroupVersionKind{Group: "cluster.x-k8s.io", Version: "v1beta2", Kind: "MachineSet"}
	secret := schema.GroupVersionKind{Version: "v1", Kind: "Secret"}
	informers := &informertest.FakeInformers{}
	r := &CachedReader{Cache: informers, Live: nopReader{}, Kinds: map[schema.GroupKind]bool{ms.GroupKind(): true}}

	g.Expect(r.Prefetch(ms)).To(Succeed())
	g.Expect(r.Prefetch(ms)).To(Succeed())
	g.Expect(r.Prefetch(secret)).To(Succeed())

	g.Expect(informers.InformersByGVK).To(HaveLen(1))
	g.Expect(informers.InformersByGVK).To(HaveKey(ms))
	g.Expect(r.SetKinds(nil)).To(ConsistOf(ms), "a prefetched informer is removed when its kind goes")

	plain := &CachedReader{Cache: nopReader{}, Live: nopReader{}, Kinds: map[schema.GroupKind]bool{ms.GroupKind(): true}}
	g.Expect(plain.Prefetch(ms)).To(Succeed())
	g.Expect(plain.SetKinds(nil)).To(BeEmpty(), "nothing started, nothing to remove")
}
