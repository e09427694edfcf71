// Package controllers holds the thin reconciler that runs the pipeline for
// opted-in HelmReleases and reports the result. All decisions live in
// internal/plan, all target-cluster I/O in internal/apply.
package controllers

import (
	"context"
	"errors"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/runtime/jitter"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/apply"
	"github.com/templatedrift/template-drift-controller/internal/plan"
	"github.com/templatedrift/template-drift-controller/internal/report"
)

// waitInterval is how soon a pass that had to wait (pending release, paused
// Cluster, template being deleted) looks again.
const waitInterval = 30 * time.Second

// TargetResolver returns the cluster and identity a HelmRelease deploys to.
type TargetResolver interface {
	For(ctx context.Context, hr *helmv2.HelmRelease) (*apply.Target, error)
}

// HelmReleaseReconciler runs the template drift pipeline for HelmReleases.
type HelmReleaseReconciler struct {
	// Client reads HelmReleases (cached).
	Client client.Client
	// Engine runs the pipeline; Targets reaches the release's cluster
	// (an *apply.Targets in production).
	Engine  *apply.Engine
	Targets TargetResolver
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
// pauses), the report.
func (r *HelmReleaseReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	start := time.Now()
	logger := log.FromContext(ctx)
	hr := &helmv2.HelmRelease{}
	if err := r.Client.Get(ctx, req.NamespacedName, hr); err != nil {
		if apierrors.IsNotFound(err) {
			r.Reporter.Metrics.Forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !hr.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	defer r.Reporter.Metrics.Duration(req.NamespacedName, start)

	res, err := r.run(ctx, hr)
	if err != nil {
		return ctrl.Result{}, err
	}
	if errors.Is(res.Err, apply.ErrConflict) {
		// Lost a race with another writer: start over from a fresh read
		// without reporting a failure that is not one.
		logger.Info("Object changed during correction, starting over", "reason", res.Err.Error())
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	out := report.Summarize(res)
	if _, err := r.Reporter.Write(ctx, req.NamespacedName, out); err != nil {
		return ctrl.Result{}, err
	}
	r.countCorrections(res)
	switch {
	case res.Err != nil:
		logger.Error(res.Err, "Template correction failed")
		return ctrl.Result{RequeueAfter: waitInterval}, nil
	case res.Verdict != nil && (res.Verdict.Remove || res.Verdict.Silent):
		return ctrl.Result{}, nil
	case out.Condition != nil && out.Condition.Status != "True":
		return ctrl.Result{RequeueAfter: waitInterval}, nil
	}
	return ctrl.Result{RequeueAfter: jitter.JitteredIntervalDuration(r.ResyncInterval)}, nil
}

// run resolves the target cluster and runs the pipeline. A target that
// cannot be reached is reported as an unavailable release.
func (r *HelmReleaseReconciler) run(ctx context.Context, hr *helmv2.HelmRelease) (*apply.Result, error) {
	opts, _ := plan.ParseOptions(hr.GetAnnotations())
	if opts.Mode == plan.ModeDisabled || hr.Spec.Suspend {
		// The gates decide; no target client is needed to decide nothing.
		return r.Engine.Run(ctx, apply.Request{HelmRelease: hr, Target: nil})
	}
	target, err := r.Targets.For(ctx, hr)
	if err != nil {
		return &apply.Result{Options: opts, Verdict: &plan.Verdict{Status: "Unknown",
			Reason: api.ReleaseUnavailableReason, Message: err.Error()}}, nil
	}
	return r.Engine.Run(ctx, apply.Request{HelmRelease: hr, Target: target})
}

func (r *HelmReleaseReconciler) countCorrections(res *apply.Result) {
	if res.Verdict != nil || res.Options.Mode != plan.ModeEnabled {
		return
	}
	result := "success"
	if res.Err != nil {
		result = "failure"
	} else if res.Writes == 0 {
		return
	}
	for _, t := range res.Templates {
		if t.State == plan.StateDrifted || t.State == plan.StateMissing {
			r.Reporter.Metrics.Correction(string(t.Strategy), result)
		}
	}
}
