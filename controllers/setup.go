package controllers

import (
	"context"
	"fmt"
	"time"

	runtimeclient "github.com/fluxcd/pkg/runtime/client"
	"github.com/prometheus/client_golang/prometheus"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/pipeline"
	"github.com/templatedrift/template-drift-controller/internal/plan"
	"github.com/templatedrift/template-drift-controller/internal/release"
	"github.com/templatedrift/template-drift-controller/internal/report"
	"github.com/templatedrift/template-drift-controller/internal/target"
)

// Config is everything a manager-run controller needs besides the manager.
// The binary and the demo wire the controller through Setup, and so do the
// tests of the manager's wiring (TestManagerWatches, TestServedKinds) and
// those that run the binary (cmd/template-drift-controller), so they run
// the same thing. The other integration tests of this package build a
// HelmReleaseReconciler themselves (world_target_test.go) and call its Reconcile
// directly, with no manager, through a target client that counts each
// write and can fail after any of them; they do not cover Setup.
type Config struct {
	// Kinds are the template kinds (--template-kinds).
	Kinds *manifest.KindMatcher
	// MaxManifestBytes bounds the release manifest (--max-manifest-bytes).
	MaxManifestBytes int
	// MaxReleaseCacheBytes bounds the decoded releases kept between passes
	// (--max-release-cache-bytes): 0 means release.DefaultMemoBytes, and a
	// negative value keeps none.
	MaxReleaseCacheBytes int64
	// DeleteWait bounds a recreate's wait for its delete.
	DeleteWait time.Duration
	// ResyncInterval is --resync-interval.
	ResyncInterval time.Duration
	// DefaultServiceAccount and KubeConfigOpts reach targets as
	// helm-controller does.
	DefaultServiceAccount string
	// AccessReviewTTL is target.Targets.ReviewTTL: how long an
	// impersonated account's allowed review is trusted for cached reads
	// where RBAC changes are not watched (0: its reads are live).
	AccessReviewTTL time.Duration
	KubeConfigOpts  runtimeclient.KubeConfigOptions
	// Events records events with metadata (Flux's recorder in production).
	Events events.AnnotatedEventRecorder
	// Metrics is the registry the add-on's metrics go to.
	Metrics prometheus.Registerer
	// Rollouts is --rollouts: the rollout policy of a release that sets
	// none ("" is deny). MaxConcurrentRollouts is
	// --max-concurrent-rollouts: how many releases may have a rollout of
	// the add-on in progress at once (negative: no limit).
	Rollouts              plan.RolloutPolicy
	MaxConcurrentRollouts int
	// MaxConcurrentReconciles is --concurrent; RateLimiter the workqueue's.
	MaxConcurrentReconciles int
	RateLimiter             workqueue.TypedRateLimiter[reconcile.Request]
}

// Setup builds the reconciler on mgr, resolves the kinds to watch, and
// registers the controller. It returns the kinds resolved, for the caller
// to log.
func Setup(ctx context.Context, mgr ctrl.Manager, cfg Config) (WatchKinds, error) {
	kinds, err := ResolveWatchKinds(ctx, mgr.GetConfig(), cfg.Kinds)
	if err != nil {
		return WatchKinds{}, err
	}
	memoBytes := cfg.MaxReleaseCacheBytes
	if memoBytes == 0 {
		memoBytes = release.DefaultMemoBytes
	}
	// One mapper for every pass on the local cluster, whatever the
	// identity, and for the read cache: it remembers the kinds the cluster
	// does not serve. With the CRD watch it believes that until a CRD of
	// its groups changes; without it, for DefaultUnservedRecheck.
	recheck := target.DefaultUnservedRecheck
	if kinds.CustomResourceDefinitions {
		recheck = 0
	}
	served, err := target.NewServedKinds(func() (apimeta.RESTMapper, error) {
		return apiutil.NewDynamicRESTMapper(mgr.GetConfig(), mgr.GetHTTPClient())
	}, recheck)
	if err != nil {
		return WatchKinds{}, fmt.Errorf("failed to create the REST mapper: %w", err)
	}
	metrics := report.NewMetrics(cfg.Metrics)
	metrics.InitKinds(templateKinds(kinds.Watch, cfg.Kinds))
	cached, readCache, err := target.NewReadCache(mgr, kinds.Read, kinds.SecretMetadata, kinds.CustomResourceDefinitions, cfg.Kinds, served)
	if err != nil {
		return WatchKinds{}, err
	}
	releases := release.NewReaderWithMemo(cfg.MaxManifestBytes, memoBytes)
	targets := &target.Targets{Local: target.LogWarningsOnce(rest.CopyConfig(mgr.GetConfig())), Reader: mgr.GetAPIReader(),
		Scheme: mgr.GetScheme(), Mapper: served, DefaultServiceAccount: cfg.DefaultServiceAccount, KubeConfigOpts: cfg.KubeConfigOpts,
		ReviewTTL: cfg.AccessReviewTTL, DryRunMemo: &target.DryRunMemo{},
		// A client that goes takes the releases read through it along.
		Evicted: releases.Forget}
	if cached != nil {
		// Interface fields: a nil *CachedReader must stay a nil Reader.
		targets.Cached = cached
		if cfg.AccessReviewTTL > 0 {
			targets.Reviews = target.NewAccessReviews(cfg.AccessReviewTTL)
			cs, err := kubernetes.NewForConfigAndClient(mgr.GetConfig(), mgr.GetHTTPClient())
			if err != nil {
				return WatchKinds{}, fmt.Errorf("failed to create the clientset: %w", err)
			}
			if err := watchRBAC(ctx, mgr.GetLogger().WithName("rbac"), cs, readCache, targets.Reviews); err != nil {
				return WatchKinds{}, err
			}
		}
	}
	if kinds.SecretMetadata {
		// The controller may list Secrets in every namespace: decode the
		// releases it will read as itself in a few pages at start.
		cs, err := kubernetes.NewForConfigAndClient(mgr.GetConfig(), mgr.GetHTTPClient())
		if err != nil {
			return WatchKinds{}, fmt.Errorf("failed to create the clientset: %w", err)
		}
		warm := &releaseWarmup{log: mgr.GetLogger().WithName("warm-up"), helmReleases: mgr.GetClient(),
			releases: releases, secrets: cs.CoreV1(), serviceAccount: targets.ServiceAccount}
		if err := mgr.Add(warm); err != nil {
			return WatchKinds{}, fmt.Errorf("failed to add the release warm-up: %w", err)
		}
	}
	budget := pipeline.NewRolloutBudget(cfg.MaxConcurrentRollouts)
	metrics.CountRollingOut(budget.InProgress)
	r := &HelmReleaseReconciler{
		Client: mgr.GetClient(),
		Engine: &pipeline.Engine{Kinds: cfg.Kinds, Releases: releases,
			MaxManifestBytes: cfg.MaxManifestBytes, DeleteWait: cfg.DeleteWait,
			Targets: targets, Rollouts: cfg.Rollouts, Budget: budget},
		Reporter:       &report.Writer{Client: mgr.GetClient(), Events: cfg.Events, Metrics: metrics},
		ResyncInterval: cfg.ResyncInterval,
	}
	c, err := r.SetupWithManager(ctx, mgr, ControllerOptions{
		MaxConcurrentReconciles: cfg.MaxConcurrentReconciles, RateLimiter: cfg.RateLimiter,
	})
	if err != nil {
		return WatchKinds{}, err
	}
	if readCache == nil {
		return kinds, nil
	}
	log := mgr.GetLogger().WithName("kinds")
	w := newKindWatches(log, kinds.Watch, readCache, r.watchHandler())
	w.setController(c)
	targets.Notice = noticeKinds(log, w, cached)
	if kinds.CustomResourceDefinitions {
		sk := &servedKinds{log: log, groups: servedGroups(cfg.Kinds), mapper: served, cache: readCache, reader: cached, watches: w,
			forget: targets.DryRunMemo.Reset,
			resolve: func(ctx context.Context) (WatchKinds, error) {
				return ResolveWatchKinds(ctx, mgr.GetConfig(), cfg.Kinds)
			}}
		if err := sk.start(ctx); err != nil {
			return WatchKinds{}, err
		}
	}
	return kinds, nil
}

// templateKinds are the kinds among watched that are template kinds, for
// the counters to start at zero.
func templateKinds(watched []schema.GroupVersionKind, m *manifest.KindMatcher) []string {
	var out []string
	if m == nil {
		return nil
	}
	seen := map[string]bool{}
	for _, gvk := range watched {
		if m.Match(gvk.GroupKind()) && !seen[gvk.Kind] {
			seen[gvk.Kind] = true
			out = append(out, gvk.Kind)
		}
	}
	return out
}
