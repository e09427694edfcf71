package controllers

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// TestDelayedEnqueue: a watched change enqueues its HelmReleases only
// after the delay (so the read cache has the change when the pass reads),
// for every event type, and an event that maps to nothing enqueues nothing.
func TestDelayedEnqueue(t *testing.T) {
	g := NewWithT(t)
	hr := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "fleet", Name: "cluster"}}
	d := delayedEnqueue{delay: 200 * time.Millisecond, mapFn: func(_ context.Context, o client.Object) []reconcile.Request {
		if o.GetName() == "unowned" {
			return nil
		}
		return []reconcile.Request{hr}
	}}
	obj := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "fleet", Name: "workers"}}
	for name, fire := range map[string]func(q workqueue.TypedRateLimitingInterface[reconcile.Request]){
		"create": func(q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			d.Create(context.Background(), event.CreateEvent{Object: obj}, q)
		},
		"update": func(q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			d.Update(context.Background(), event.UpdateEvent{ObjectOld: obj, ObjectNew: obj}, q)
		},
		"delete": func(q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			d.Delete(context.Background(), event.DeleteEvent{Object: obj}, q)
		},
		"generic": func(q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			d.Generic(context.Background(), event.GenericEvent{Object: obj}, q)
		},
	} {
		q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
		fire(q)
		g.Expect(q.Len()).To(BeZero(), "%s: not before the delay", name)
		g.Eventually(q.Len, time.Second, 10*time.Millisecond).Should(Equal(1), "%s: after it", name)
		item, _ := q.Get()
		g.Expect(item).To(Equal(hr))
		q.ShutDown()
	}
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	d.Create(context.Background(), event.CreateEvent{Object: &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "unowned"}}}, q)
	g.Consistently(q.Len, 400*time.Millisecond, 20*time.Millisecond).Should(BeZero())
}

// TestUpdateOfWhatIsNotKept: an update whose objects, as the informer
// keeps them, differ only in resourceVersion starts no pass; one that
// changed anything kept does.
func TestUpdateOfWhatIsNotKept(t *testing.T) {
	hr := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "fleet", Name: "cluster"}}
	d := delayedEnqueue{delay: time.Millisecond, mapFn: func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{hr}
	}}
	md := func(rv, ref string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineDeployment",
			"metadata": map[string]any{"name": "workers", "namespace": "fleet", "resourceVersion": rv},
			"spec":     map[string]any{"template": map[string]any{"spec": map[string]any{"infrastructureRef": map[string]any{"name": ref}}}}}}
	}
	tests := []struct {
		name     string
		old, new client.Object
		enqueued bool
	}{
		{"only the resourceVersion (a status the cache does not keep)", md("1", "md0"), md("2", "md0"), false},
		{"a reference", md("1", "md0"), md("2", "md0-abc"), true},
		{"an annotation", md("1", "md0"), func() client.Object {
			u := md("2", "md0")
			u.SetAnnotations(map[string]string{"cluster.x-k8s.io/paused": ""})
			return u
		}(), true},
		{"not unstructured", &metav1.PartialObjectMetadata{}, &metav1.PartialObjectMetadata{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
			defer q.ShutDown()
			d.Update(context.Background(), event.UpdateEvent{ObjectOld: tt.old, ObjectNew: tt.new}, q)
			if tt.enqueued {
				g.Eventually(q.Len, time.Second, 10*time.Millisecond).Should(Equal(1))
				return
			}
			g.Consistently(q.Len, 100*time.Millisecond, 10*time.Millisecond).Should(BeZero())
		})
	}
}
