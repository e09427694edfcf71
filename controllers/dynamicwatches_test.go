package controllers

import (
	"errors"
	"testing"

	"github.com/go-logr/logr"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/cache/informertest"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/templatedrift/template-drift-controller/internal/target"
)

// watchRecorder is a controller that records the sources it is asked to
// watch, and refuses while err is set.
type watchRecorder struct {
	controller.Controller
	sources []source.Source
	err     error
}

func (w *watchRecorder) Watch(src source.Source) error {
	if w.err != nil {
		return w.err
	}
	w.sources = append(w.sources, src)
	return nil
}

// TestKindWatchesStartOncePerVersion: a pass's read of a watched kind
// starts one watch for that kind at that version, whatever the number of
// reads; another version gets its own; a kind not watched (no list and
// watch rights, or not a template or consumer kind) gets none; a watch the
// controller refuses is tried again on the next read.
func TestKindWatchesStartOncePerVersion(t *testing.T) {
	g := NewWithT(t)
	m3v1 := schema.GroupVersionKind{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta1", Kind: "Metal3MachineTemplate"}
	m3v2 := m3v1.GroupKind().WithVersion("v1beta2")
	cluster := schema.GroupVersionKind{Group: "cluster.x-k8s.io", Version: "v1beta2", Kind: "Cluster"}
	w := newKindWatches(logr.Discard(), []schema.GroupVersionKind{m3v2}, nil, delayedEnqueue{})

	w.Notice(m3v1)
	g.Expect(w.Started()).To(BeEmpty(), "nothing before the controller is built")

	rec := &watchRecorder{}
	w.setController(rec)
	for range 3 {
		w.Notice(m3v1)
	}
	w.Notice(cluster)
	g.Expect(rec.sources).To(HaveLen(1))
	g.Expect(w.Started()).To(ConsistOf(m3v1), "the watch is at the version read, not the preferred one")

	rec.err = errors.New("controller stopped")
	w.Notice(m3v2)
	g.Expect(w.Started()).To(ConsistOf(m3v1))
	rec.err = nil
	w.Notice(m3v2)
	g.Expect(w.Started()).To(ConsistOf(m3v1, m3v2))
	g.Expect(rec.sources).To(HaveLen(2))
}

// TestNoticeKindsStartsReadOnlyKinds: Targets.Notice starts the watch of a
// watched kind, and the informer of a kind read but not watched (a
// MachineSet), without a read; a kind read live starts neither.
func TestNoticeKindsStartsReadOnlyKinds(t *testing.T) {
	g := NewWithT(t)
	m3 := schema.GroupVersionKind{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta1", Kind: "Metal3MachineTemplate"}
	ms := schema.GroupVersionKind{Group: "cluster.x-k8s.io", Version: "v1beta2", Kind: "MachineSet"}
	secret := schema.GroupVersionKind{Version: "v1", Kind: "Secret"}
	informers := &informertest.FakeInformers{}
	cached := &target.CachedReader{Cache: informers, Live: informers,
		Kinds: map[schema.GroupKind]bool{m3.GroupKind(): true, ms.GroupKind(): true}}
	w := newKindWatches(logr.Discard(), []schema.GroupVersionKind{m3}, informers, delayedEnqueue{})
	rec := &watchRecorder{}
	w.setController(rec)
	notice := noticeKinds(logr.Discard(), w, cached)

	notice(m3)
	notice(ms)
	notice(secret)

	g.Expect(w.Started()).To(ConsistOf(m3), "only the watched kind gets a watch")
	g.Expect(informers.InformersByGVK).To(HaveKey(ms), "the read-only kind's informer started without a read")
	g.Expect(informers.InformersByGVK).NotTo(HaveKey(secret))
	g.Expect(noticeKinds(logr.Discard(), w, nil)).NotTo(BeNil(), "no read cache: watches only")
}
