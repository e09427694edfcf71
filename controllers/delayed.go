package controllers

import (
	"context"
	"maps"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// watchDelay is how long after a change to a template or consumer its
// HelmRelease's pass starts. The watch and the pass's reads share one
// informer (kindWatches), so the pass would see the change at once; the
// delay coalesces a burst of changes, such as a Helm upgrade's or the
// controller's own corrections, into one pass.
const watchDelay = 250 * time.Millisecond

// delayedEnqueue maps each event to HelmReleases, as
// handler.EnqueueRequestsFromMapFunc does, and enqueues them after delay.
type delayedEnqueue struct {
	mapFn handler.MapFunc
	delay time.Duration
}

var _ handler.EventHandler = delayedEnqueue{}

func (d delayedEnqueue) add(ctx context.Context, o client.Object, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	if o == nil {
		return
	}
	for _, req := range d.mapFn(ctx, o) {
		q.AddAfter(req, d.delay)
	}
}

// Create implements handler.EventHandler.
func (d delayedEnqueue) Create(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	d.add(ctx, e.Object, q)
}

// Update implements handler.EventHandler. An update that changed nothing
// the informer keeps but the resourceVersion (a consumer's status, which
// the read cache does not keep, or managedFields) starts no pass: the pass
// would read what the last one read.
func (d delayedEnqueue) Update(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	if sameButVersion(e.ObjectOld, e.ObjectNew) {
		return
	}
	d.add(ctx, e.ObjectNew, q)
}

// sameButVersion reports whether two unstructured objects are equal but
// for their resourceVersion.
func sameButVersion(a, b client.Object) bool {
	ua, ok1 := a.(*unstructured.Unstructured)
	ub, ok2 := b.(*unstructured.Unstructured)
	if !ok1 || !ok2 || ua == nil || ub == nil {
		return false
	}
	return equality.Semantic.DeepEqual(withoutVersion(ua.Object), withoutVersion(ub.Object))
}

// withoutVersion returns a shallow copy of o without
// metadata.resourceVersion.
func withoutVersion(o map[string]any) map[string]any {
	out := maps.Clone(o)
	if md, ok := o["metadata"].(map[string]any); ok {
		md = maps.Clone(md)
		delete(md, "resourceVersion")
		out["metadata"] = md
	}
	return out
}

// Delete implements handler.EventHandler.
func (d delayedEnqueue) Delete(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	d.add(ctx, e.Object, q)
}

// Generic implements handler.EventHandler.
func (d delayedEnqueue) Generic(ctx context.Context, e event.GenericEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	d.add(ctx, e.Object, q)
}
