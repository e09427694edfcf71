package controllers

import (
	"context"
	"fmt"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/release"
	"github.com/templatedrift/template-drift-controller/internal/target"
)

// releaseIndex indexes HelmReleases by "<release namespace>/<release name>",
// the pair Helm writes into meta.helm.sh/release-{namespace,name} of every
// object it owns, so a change to a template finds its HelmRelease.
const releaseIndex = ".metadata.helmRelease"

// ControllerOptions configure the controller.
type ControllerOptions struct {
	// MaxConcurrentReconciles is --concurrent.
	MaxConcurrentReconciles int
	// RateLimiter is the workqueue rate limiter (--min-retry-delay, --max-retry-delay).
	RateLimiter workqueue.TypedRateLimiter[reconcile.Request]
}

// SetupWithManager registers the controller on HelmReleases, filtered to
// the changes that matter, and returns it: the watches of the template
// and consumer kinds are added to it as passes read them (kindWatches).
func (r *HelmReleaseReconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, opts ControllerOptions) (controller.Controller, error) {
	err := mgr.GetFieldIndexer().IndexField(ctx, &helmv2.HelmRelease{}, releaseIndex, func(o client.Object) []string {
		hr := o.(*helmv2.HelmRelease)
		return []string{hr.GetReleaseNamespace() + "/" + release.Name(hr)}
	})
	if err != nil {
		return nil, fmt.Errorf("failed to index HelmReleases by release: %w", err)
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named(api.ControllerName).
		For(&helmv2.HelmRelease{}, builder.WithPredicates(predicate.Or(
			predicate.GenerationChangedPredicate{},
			predicate.AnnotationChangedPredicate{},
			historyChanged{},
		))).
		WithOptions(controller.Options{MaxConcurrentReconciles: opts.MaxConcurrentReconciles, RateLimiter: opts.RateLimiter}).
		Build(r)
}

// watchHandler maps a change to a watched object to its HelmReleases,
// after watchDelay.
func (r *HelmReleaseReconciler) watchHandler() delayedEnqueue {
	return delayedEnqueue{mapFn: r.toHelmRelease, delay: watchDelay}
}

// toHelmRelease maps an object Helm owns to the HelmReleases of its release.
func (r *HelmReleaseReconciler) toHelmRelease(ctx context.Context, o client.Object) []reconcile.Request {
	// The read cache's objects are compact: their Helm release is read
	// without decoding them.
	name, ns := target.HelmOwner(o)
	if name == "" || ns == "" {
		return nil
	}
	var list helmv2.HelmReleaseList
	// Read-only: the cache's own objects, not copies (a watch's first list
	// maps every object of a kind, thousands of HelmRelease copies).
	if err := r.Client.List(ctx, &list, client.MatchingFields{releaseIndex: ns + "/" + name}, client.UnsafeDisableDeepCopy); err != nil {
		// The cache answers this; the resync covers the object if it fails.
		log.FromContext(ctx).V(1).Info("Cannot map object to its HelmRelease", "object", klog.KObj(o), "reason", err.Error())
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for _, hr := range list.Items {
		if hr.Spec.KubeConfig == nil {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&hr)})
		}
	}
	return out
}

// historyChanged passes updates whose latest release snapshot changed: a new
// release, or a status change of the same one (pending → deployed).
type historyChanged struct{ predicate.Funcs }

// Update implements predicate.Predicate.
func (historyChanged) Update(e event.UpdateEvent) bool {
	oldHR, ok1 := e.ObjectOld.(*helmv2.HelmRelease)
	newHR, ok2 := e.ObjectNew.(*helmv2.HelmRelease)
	if !ok1 || !ok2 {
		return false
	}
	a, b := oldHR.Status.History.Latest(), newHR.Status.History.Latest()
	switch {
	case a == nil || b == nil:
		return a != b
	default:
		return a.Version != b.Version || a.Status != b.Status || a.Digest != b.Digest
	}
}
