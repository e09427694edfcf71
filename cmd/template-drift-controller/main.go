// Command template-drift-controller heals drifted Cluster API templates of
// opted-in Flux HelmReleases. main only wires flags, manager and reconciler;
// its `diff` and `preview` subcommands, deprecated, run the templatedrift
// command's (cmd/templatedrift), which operators and CI use instead.
package main

import (
	"errors"
	goflag "flag"
	"fmt"
	"os"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	runtimeclient "github.com/fluxcd/pkg/runtime/client"
	helper "github.com/fluxcd/pkg/runtime/controller"
	"github.com/fluxcd/pkg/runtime/events"
	"github.com/fluxcd/pkg/runtime/jitter"
	"github.com/fluxcd/pkg/runtime/leaderelection"
	"github.com/fluxcd/pkg/runtime/logger"
	"github.com/fluxcd/pkg/runtime/pprof"
	"github.com/fluxcd/pkg/runtime/probes"
	flag "github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	ctrlclient "sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/client/config"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/controllers"
	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/plan"
	"github.com/templatedrift/template-drift-controller/internal/release"
	"github.com/templatedrift/template-drift-controller/internal/target"
	"github.com/templatedrift/template-drift-controller/internal/version"
)

// flags are the add-on's own settings; the cross-cutting ones come from
// fluxcd/pkg/runtime option structs, as in every Flux controller.
type flags struct {
	metricsAddr, eventsAddr, healthAddr string
	concurrent                          int
	templateKinds                       []string
	resyncInterval, deleteWait          time.Duration
	defaultServiceAccount               string
	accessReviewTTL                     time.Duration
	maxManifestBytes                    int
	maxReleaseCacheBytes                int64
	gracefulShutdown                    time.Duration
	version                             bool
	rollouts                            string
	maxConcurrentRollouts               int

	client         runtimeclient.Options
	kubeConfig     runtimeclient.KubeConfigOptions
	log            logger.Options
	leaderElection leaderelection.Options
	rateLimiter    helper.RateLimiterOptions
	watch          helper.WatchOptions
	jitter         jitter.IntervalOptions
	compat         compatOptions
}

func parseFlags(args []string) (*flags, error) {
	f := &flags{}
	fs := flag.NewFlagSet(api.ControllerName, flag.ContinueOnError)
	fs.StringVar(&f.metricsAddr, "metrics-addr", ":8080", "The address the metric endpoint binds to.")
	fs.StringVar(&f.eventsAddr, "events-addr", "", "The address of the events receiver (notification-controller).")
	fs.StringVar(&f.healthAddr, "health-addr", ":9440", "The address the health endpoint binds to.")
	fs.IntVar(&f.concurrent, "concurrent", 4, "The number of concurrent HelmRelease reconciles.")
	fs.StringSliceVar(&f.templateKinds, "template-kinds", manifest.DefaultTemplateKinds,
		"The template kinds the controller may correct, as group/KindPattern globs.")
	fs.DurationVar(&f.resyncInterval, "resync-interval", 10*time.Minute, "How often every opted-in HelmRelease is checked again.")
	fs.DurationVar(&f.deleteWait, "recreate-delete-wait", 10*time.Second, "How long a recreate waits for the old template to be gone.")
	fs.StringVar(&f.defaultServiceAccount, "default-service-account", "",
		"The service account impersonated for HelmReleases that name none (as helm-controller's flag).")
	fs.DurationVar(&f.accessReviewTTL, "access-review-ttl", target.DefaultReviewTTL,
		"How long an impersonated account's reviewed permission to list a kind in a namespace is trusted where the controller does not watch RBAC objects or an authorizer does not list its rules, so that its passes read that kind from the controller's informers; 0 reads live as the account.")
	fs.IntVar(&f.maxManifestBytes, "max-manifest-bytes", manifest.DefaultMaxManifestBytes, "The largest release manifest parsed.")
	fs.Int64Var(&f.maxReleaseCacheBytes, "max-release-cache-bytes", release.DefaultMemoBytes,
		"The bytes of decoded releases kept between passes (their manifests, compressed, mostly); 0 decodes every pass's release again.")
	fs.StringVar(&f.rollouts, "rollouts", plan.RolloutsDeny.String(),
		"Whether a correction that would roll Machines is made (allow) or waits for an approval on its HelmRelease (deny), for releases that do not say.")
	fs.IntVar(&f.maxConcurrentRollouts, "max-concurrent-rollouts", -1,
		"How many releases may have a rollout the controller made in progress at once; negative: no limit, 0: no rollout starts.")
	fs.DurationVar(&f.gracefulShutdown, "graceful-shutdown-timeout", 60*time.Second, "How long to wait for reconciles on shutdown.")
	fs.BoolVar(&f.version, "version", false, "Print the version, commit and commit date, then exit.")
	f.client.BindFlags(fs)
	f.kubeConfig.BindFlags(fs)
	f.log.BindFlags(fs)
	f.leaderElection.BindFlags(fs)
	f.rateLimiter.BindFlags(fs)
	f.watch.BindFlags(fs)
	f.jitter.BindFlags(fs)
	f.compat.BindFlags(fs)
	// --kubeconfig, as every controller-runtime binary has it.
	gofs := goflag.NewFlagSet("", goflag.ContinueOnError)
	ctrlconfig.RegisterFlags(gofs)
	fs.AddGoFlagSet(gofs)
	if err := fs.Parse(args); err != nil {
		return f, err
	}
	return f, f.compat.load(fs)
}

func main() {
	if code, ok := subcommand(os.Args[1:]); ok {
		os.Exit(code)
	}
	f, err := parseFlags(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if f.version {
		if err := version.Print(os.Stdout); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	logger.SetLogger(logger.NewLogger(f.log))
	ctrl.Log.WithName("setup").Info("Garbage collector target", "gcPercent", setGCPercent(), "fromGOGC", os.Getenv("GOGC") != "")
	if err := run(f); err != nil {
		ctrl.Log.Error(err, "Controller stopped")
		os.Exit(1)
	}
}

// managerOptions are the manager's settings from the flags, as in Flux
// controllers: leader election, probes, metrics, and a HelmRelease cache
// limited by the watch label selector (and to RUNTIME_NAMESPACE without
// --watch-all-namespaces).
func managerOptions(f *flags, scheme *runtime.Scheme, selector labels.Selector) ctrl.Options {
	opts := ctrl.Options{
		Scheme:                        scheme,
		HealthProbeBindAddress:        f.healthAddr,
		LeaderElection:                f.leaderElection.Enable,
		LeaderElectionReleaseOnCancel: f.leaderElection.ReleaseOnCancel,
		LeaseDuration:                 &f.leaderElection.LeaseDuration,
		RenewDeadline:                 &f.leaderElection.RenewDeadline,
		RetryPeriod:                   &f.leaderElection.RetryPeriod,
		LeaderElectionID:              leaderElectionID(f.watch.LabelSelector),
		GracefulShutdownTimeout:       &f.gracefulShutdown,
		Logger:                        ctrl.Log,
		// pprof on the metrics endpoint, as Flux controllers serve it.
		Metrics: metricsserver.Options{BindAddress: f.metricsAddr, ExtraHandlers: pprof.GetHandlers()},
		Cache: ctrlcache.Options{
			ByObject: map[ctrlclient.Object]ctrlcache.ByObject{&helmv2.HelmRelease{}: {Label: selector}},
			// Nothing reads a HelmRelease's managedFields, values or
			// post-renderers: each is a few KB, the values often tens,
			// kept for every release of the fleet.
			DefaultTransform: controllers.TrimHelmRelease(),
		},
	}
	// RUNTIME_NAMESPACE is where the controller runs, as in Flux: its
	// leader-election Lease lives there, and without --watch-all-namespaces
	// it is the only namespace watched.
	if ns := os.Getenv("RUNTIME_NAMESPACE"); ns != "" {
		opts.LeaderElectionNamespace = ns
		if !f.watch.AllNamespaces {
			opts.Cache.DefaultNamespaces = map[string]ctrlcache.Config{ns: {}}
		}
	}
	return opts
}

// leaderElectionID is the Lease name, as helm-controller names its own: a
// shard (--watch-label-selector) gets the base name with a short hash of its
// selector, so that shards deployed side by side each elect their own
// leader instead of waiting on one another's Lease.
func leaderElectionID(watchSelector string) string {
	base := api.ControllerName + "-leader-election"
	if watchSelector == "" {
		return base
	}
	return leaderelection.GenerateID(base, watchSelector)
}

func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(s)
	_ = helmv2.AddToScheme(s)
	return s
}

func run(f *flags) error {
	setupLog := ctrl.Log.WithName("setup")
	kinds, err := manifest.ParseKinds(f.templateKinds)
	if err != nil {
		return err
	}
	rollouts, err := plan.ParseRolloutPolicy(f.rollouts)
	if err != nil {
		return fmt.Errorf("--rollouts: %w", err)
	}
	selector, err := helper.GetWatchSelector(f.watch)
	if err != nil {
		return fmt.Errorf("failed to parse watch label selector: %w", err)
	}
	if err := f.jitter.SetGlobalJitter(nil); err != nil {
		return fmt.Errorf("failed to set the interval jitter: %w", err)
	}
	// Log each distinct API server warning once, not on every request.
	restConfig := target.LogWarningsOnce(runtimeclient.GetConfigOrDie(f.client))
	scheme := newScheme()
	opts := managerOptions(f, scheme, selector)
	var mgr ctrl.Manager
	if err := controllers.RetryStartup(func() error {
		var err error
		mgr, err = ctrl.NewManager(restConfig, opts)
		return err
	}); err != nil {
		return fmt.Errorf("failed to create manager: %w", err)
	}
	probes.SetupChecks(mgr, setupLog)
	recorder, err := events.NewRecorder(ctrl.Log, f.eventsAddr, api.ControllerName, events.WithManager(mgr))
	if err != nil {
		return fmt.Errorf("failed to create event recorder: %w", err)
	}
	ctx := ctrl.SetupSignalHandler()
	watchKinds, err := controllers.Setup(ctx, mgr, controllers.Config{
		Kinds: kinds, MaxManifestBytes: f.maxManifestBytes, MaxReleaseCacheBytes: releaseCacheBytes(f.maxReleaseCacheBytes), DeleteWait: f.deleteWait, ResyncInterval: f.resyncInterval,
		DefaultServiceAccount: f.defaultServiceAccount, AccessReviewTTL: f.accessReviewTTL, KubeConfigOpts: f.kubeConfig,
		Events: recorder, Metrics: ctrlmetrics.Registry,
		MaxConcurrentReconciles: f.concurrent, RateLimiter: helper.GetRateLimiter(f.rateLimiter),
		Rollouts: rollouts, MaxConcurrentRollouts: f.maxConcurrentRollouts,
	})
	if err != nil {
		return err
	}
	setupLog.Info("Watching template and consumer kinds, each at the versions passes read it at", "kinds", fmt.Sprint(watchKinds.Watch), "templateKinds", kinds.String())
	if len(watchKinds.Forbidden) > 0 {
		setupLog.Info("Not watching kinds this controller may not list and watch; only the resync covers them (grant them in the chart's templateKinds.rbac)",
			"kinds", fmt.Sprint(watchKinds.Forbidden))
	}
	for _, notice := range f.compat.notices() {
		setupLog.Info(notice)
	}
	setupLog.Info("Starting manager", "controller", api.ControllerName, "version", version.Version, "commit", version.Commit)
	return mgr.Start(ctx)
}

// releaseCacheBytes maps --max-release-cache-bytes to Config: the flag's 0
// (keep none) is Config's negative, since Config's 0 is the default.
func releaseCacheBytes(flag int64) int64 {
	if flag <= 0 {
		return -1
	}
	return flag
}
