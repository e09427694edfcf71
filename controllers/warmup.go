package controllers

import (
	"context"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/go-logr/logr"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/internal/plan"
	"github.com/templatedrift/template-drift-controller/internal/release"
	"github.com/templatedrift/template-drift-controller/internal/target"
)

// releaseWarmup decodes, once the controller leads, the stored releases of
// the opted-in HelmReleases it reads as itself (warms) from a
// paged list of release Secrets (release.Reader.Warm). A controller that
// starts (an upgrade, a new leader) with thousands of releases would
// otherwise read each release Secret with a request of its own on the
// first pass. It runs beside the workers, not before them: the first passes
// read what it has not reached yet as they always do, and a warm-up that
// fails only logs, as the passes read everything anyway.
type releaseWarmup struct {
	log logr.Logger
	// helmReleases lists the HelmReleases from the manager's cache, as the
	// controller watches them (namespaces, label selector).
	helmReleases client.Reader
	releases     *release.Reader
	// secrets reads as the controller in the local cluster: the identity
	// of the targets keyed target.LocalKey.
	secrets corev1client.SecretsGetter
	// serviceAccount tells the HelmReleases whose passes impersonate.
	serviceAccount func(*helmv2.HelmRelease) string
	pageSize       int64
}

// NeedLeaderElection: only the leader's passes read the releases.
func (w *releaseWarmup) NeedLeaderElection() bool { return true }

// Start runs the warm-up once and returns; the manager goes on.
func (w *releaseWarmup) Start(ctx context.Context) error {
	start := time.Now()
	list := &helmv2.HelmReleaseList{}
	if err := w.helmReleases.List(ctx, list); err != nil {
		w.log.Error(err, "Not warming the release memo: failed to list HelmReleases; the first passes read each release Secret")
		return nil
	}
	want := map[[2]string]bool{}
	for i := range list.Items {
		hr := &list.Items[i]
		if warms(hr.GetAnnotations(), hr.Spec.KubeConfig != nil, w.serviceAccount(hr)) {
			want[[2]string{hr.GetStorageNamespace(), release.Name(hr)}] = true
			// Decoded with the digest algorithm its status.history names
			// (helm-controller's --snapshot-digest-algo), its pass finds the
			// release ready to verify.
			w.releases.NoteSnapshot(hr.Status.History.Latest())
		}
	}
	if len(want) == 0 {
		return nil
	}
	src := release.Source{Secrets: w.secrets, Key: target.LocalKey}
	res, err := w.releases.Warm(ctx, src, func(ns, name string) bool { return want[[2]string{ns, name}] }, w.pageSize)
	keys := []any{"releases", len(want), "decoded", res.Decoded, "listed", res.Listed, "pages", res.Pages,
		"memoFull", res.Full, "duration", time.Since(start).Round(time.Millisecond).String()}
	if err != nil {
		w.log.Error(err, "Warming the release memo stopped; the first passes read the rest one Secret each", keys...)
		return nil
	}
	w.log.Info("Warmed the release memo", keys...)
	return nil
}

// warms reports whether the warm-up decodes a HelmRelease's stored release
// into the memo: it must be opted in (enabled or warn, with valid
// annotations), and its passes must read Helm storage in the local cluster
// as the controller itself, with no spec.kubeConfig and no service account
// to impersonate. The warm-up lists as the controller, and a memo entry
// serves only the identity that read it: an impersonated pass must find
// nothing its account was not shown to be allowed to read.
func warms(annotations map[string]string, remote bool, serviceAccount string) bool {
	opts, err := plan.ParseOptions(annotations, plan.RolloutsDeny)
	return err == nil && opts.Mode != plan.ModeDisabled && !remote && serviceAccount == ""
}
