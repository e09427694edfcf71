// Package controllers holds the thin reconciler that runs the pipeline for
// opted-in HelmReleases and reports the result. All decisions live in
// internal/plan, the stages in internal/pipeline, the reads of a target
// cluster behind internal/target and its writes in internal/apply.
package controllers

import (
	"context"
	"errors"
	"fmt"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/runtime/jitter"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/templatedrift/template-drift-controller/internal/apply"
	"github.com/templatedrift/template-drift-controller/internal/pipeline"
	"github.com/templatedrift/template-drift-controller/internal/plan"
	"github.com/templatedrift/template-drift-controller/internal/report"
)

// waitInterval is how soon a pass that had to wait (pending release, paused
// Cluster, template being deleted) looks again. Waits are not failures, so
// they do not back off.
const waitInterval = 30 * time.Second

// HelmReleaseReconciler runs the template drift pipeline for HelmReleases.
type HelmReleaseReconciler struct {
	// Client reads HelmReleases (cached).
	Client client.Client
	// Engine runs the pipeline.
	Engine *pipeline.Engine
	// Reporter writes the condition, events and metrics.
	Reporter *report.Writer
	// ResyncInterval is the periodic full pass, which catches drift that no
	// watch saw (remote targets, kinds installed after start).
	ResyncInterval time.Duration
}

// +kubebuilder:rbac:groups=helm.toolkit.fluxcd.io,resources=helmreleases,verbs=get;list;watch
// +kubebuilder:rbac:groups=helm.toolkit.fluxcd.io,resources=helmreleases/status,verbs=get;patch

// Reconcile reads the HelmRelease, then always in the same order: deletion,
// the pipeline (whose gates handle opt-in, suspend, release state and
// pauses), the report. A pass that failed returns its error, so the
// workqueue's rate limiter backs off (--min-retry-delay, --max-retry-delay).
func (r *HelmReleaseReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	start := time.Now()
	hr := &helmv2.HelmRelease{}
	if err := r.Client.Get(ctx, req.NamespacedName, hr); err != nil {
		if apierrors.IsNotFound(err) {
			r.Reporter.Metrics.Forget(req.NamespacedName)
			r.Engine.Forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !hr.DeletionTimestamp.IsZero() {
		r.Engine.Forget(req.NamespacedName)
		return ctrl.Result{}, nil
	}
	defer r.Reporter.Metrics.Duration(req.NamespacedName, start)

	res, err := r.Engine.Run(ctx, pipeline.Request{HelmRelease: hr})
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("failed to check templates: %w", err)
	}
	if errors.Is(res.Err, apply.ErrConflict) {
		// Lost a race with another writer: not a failure to report. Start
		// over from a fresh read, with back-off.
		log.FromContext(ctx).Info("Object changed during correction, starting over", "reason", res.Err.Error())
		return ctrl.Result{}, res.Err
	}
	sum := report.Summarize(res)
	if _, err := r.Reporter.Write(ctx, req.NamespacedName, sum); err != nil {
		return ctrl.Result{}, err
	}
	return r.next(res, sum)
}

// next turns plan.NextPass into a result: back-off after a failed
// correction, the wait interval while something is pending, the jittered
// resync otherwise.
func (r *HelmReleaseReconciler) next(res *pipeline.Result, sum report.Summary) (ctrl.Result, error) {
	switch plan.NextPass(sum.Conclusion, res.Err) {
	case plan.NextBackoff:
		return ctrl.Result{}, fmt.Errorf("template correction failed: %w", res.Err)
	case plan.NextNever:
		return ctrl.Result{}, nil
	case plan.NextWait:
		return ctrl.Result{RequeueAfter: waitInterval}, nil
	}
	return ctrl.Result{RequeueAfter: jitter.JitteredIntervalDuration(r.ResyncInterval), Priority: &resyncPriority}, nil
}

// resyncPriority is the workqueue priority of an in-sync release's next
// resync: below a watch event's, so that with thousands of releases
// queued for their resync a template that drifts, or a HelmRelease that
// changes, is served first instead of waiting behind them.
// controller-runtime gives the informers' first list the same low
// priority.
var resyncPriority = handler.LowPriority
