package controllers

import (
	"context"
	"time"

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

// Update implements handler.EventHandler.
func (d delayedEnqueue) Update(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	d.add(ctx, e.ObjectNew, q)
}

// Delete implements handler.EventHandler.
func (d delayedEnqueue) Delete(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	d.add(ctx, e.Object, q)
}

// Generic implements handler.EventHandler.
func (d delayedEnqueue) Generic(ctx context.Context, e event.GenericEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	d.add(ctx, e.Object, q)
}
