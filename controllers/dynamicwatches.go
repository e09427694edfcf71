package controllers

import (
	"sync"

	"github.com/go-logr/logr"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/templatedrift/template-drift-controller/internal/target"
)

// kindWatches watches each template and consumer kind at the versions
// passes read it at, from the read cache's own informers: one informer per
// kind and version, holding what the passes read, rather than a second,
// metadata-only one at the server's preferred version. A change therefore
// reaches the handler only after the informer a pass reads has it.
//
// The versions are those of the releases' manifests, known only once the
// releases are read, so a watch starts on a pass's first read of a kind at
// a version (Notice). Its informer's initial list then maps every object
// of that kind to its HelmRelease once more, a pass that finds nothing to
// do. Kinds the controller may not list and watch cluster-wide are not in
// kinds, and are left to the resync.
type kindWatches struct {
	// log is the controller's logger: Notice runs inside a pass, whose
	// context is not at hand.
	log     logr.Logger
	cache   ctrlcache.Cache
	handler handler.EventHandler

	mu      sync.Mutex
	kinds   map[schema.GroupKind]bool
	ctrl    controller.Controller
	started map[schema.GroupVersionKind]bool
}

func newKindWatches(log logr.Logger, kinds []schema.GroupVersionKind, cache ctrlcache.Cache, h handler.EventHandler) *kindWatches {
	w := &kindWatches{log: log, kinds: map[schema.GroupKind]bool{}, cache: cache, handler: h,
		started: map[schema.GroupVersionKind]bool{}}
	for _, gvk := range kinds {
		w.kinds[gvk.GroupKind()] = true
	}
	return w
}

// setController gives the watches the controller whose queue they feed.
func (w *kindWatches) setController(c controller.Controller) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.ctrl = c
}

// Notice starts the watch of gvk, once, if its kind is watched. It does
// not wait for the informer to sync: the read that follows does.
func (w *kindWatches) Notice(gvk schema.GroupVersionKind) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.kinds[gvk.GroupKind()] || w.ctrl == nil || w.started[gvk] {
		return
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	if err := w.ctrl.Watch(source.Kind[client.Object](w.cache, u, w.handler)); err != nil {
		// Only a controller that has stopped refuses; the next read tries again.
		w.log.Error(err, "Cannot watch kind", "kind", gvk.String())
		return
	}
	w.started[gvk] = true
	w.log.Info("Watching kind", "kind", gvk.String())
}

// setKinds replaces the kinds watched: the cluster's served kinds changed.
// A kind no longer watched loses its started versions, whose informers the
// caller removes; a kind that comes back starts its watch again on its
// next read.
func (w *kindWatches) setKinds(kinds []schema.GroupVersionKind) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.kinds = map[schema.GroupKind]bool{}
	for _, gvk := range kinds {
		w.kinds[gvk.GroupKind()] = true
	}
	for gvk := range w.started {
		if !w.kinds[gvk.GroupKind()] {
			delete(w.started, gvk)
		}
	}
}

// Started returns the kinds and versions watched so far.
func (w *kindWatches) Started() []schema.GroupVersionKind {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]schema.GroupVersionKind, 0, len(w.started))
	for gvk := range w.started {
		out = append(out, gvk)
	}
	return out
}

// noticeKinds is Targets.Notice: it starts the watch of a watched kind,
// and the informer of a kind read from the informers but not watched
// (Clusters, MachineSets, Metal3DataClaims, Metal3Data), which would
// otherwise start only at its first read, after the reads before it.
func noticeKinds(log logr.Logger, w *kindWatches, cached *target.CachedReader) func(schema.GroupVersionKind) {
	return func(gvk schema.GroupVersionKind) {
		w.Notice(gvk)
		if cached == nil {
			return
		}
		if err := cached.Prefetch(gvk); err != nil {
			// The read that follows starts the informer itself and reports
			// its error, once a pass, where this would on every notice.
			log.V(1).Info("Cannot start loading a kind ahead of its first read; the read starts it", "kind", gvk.String(), "error", err.Error())
		}
	}
}
