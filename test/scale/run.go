package scale

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/internal/testenv"
	"github.com/templatedrift/template-drift-controller/test/harness"
)

// BuildController builds cmd/template-drift-controller into root's bin/,
// where the e2e suite's add-on binary lives too (`make e2e-bin` builds the
// same file); Go's build cache makes a rebuild of unchanged code quick. It
// returns the binary's path.
func BuildController(ctx context.Context, root string) (string, error) {
	bin := filepath.Join(root, "bin", "template-drift-controller")
	goTool := os.Getenv("GO")
	if goTool == "" {
		goTool = "go"
	}
	cmd := exec.CommandContext(ctx, goTool, "build", "-o", bin, "./cmd/template-drift-controller")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("failed to build the controller: %w\n%s", err, out)
	}
	return bin, nil
}

// ControllerFlags are the flags the controller runs with, besides its
// loopback metrics and health addresses: every namespace, a resync suited
// to measuring, then cfg.ControllerArgs. Everything else is the binary's
// default, as a user would run it (--concurrent, --kube-api-qps, ...).
func ControllerFlags(cfg Config) []string {
	return append([]string{"--watch-all-namespaces=true", "--resync-interval=" + cfg.Resync.String(), "--log-level=info"},
		cfg.ControllerArgs...)
}

// run is one fleet size measured on its own control plane. Its fields
// become valid step by step, in the order of Run's steps.
type run struct {
	cfg    Config
	n      int
	fleet  Fleet
	target Target
	dir    string
	logf   func(format string, args ...any)

	// Valid after startControlPlane: the control plane, its audit log,
	// the pids of kube-apiserver and etcd, the controller user's kubeconfig.
	env                   *testenv.Env
	auditLog              string
	apiServerPID, etcdPID int
	kubeconfig            string

	// Valid after createFleet, for helm-controller: the chart server.
	chart *ChartServer

	// Valid after watchHelmReleases: the harness's informer of the
	// HelmReleases, which the convergence is judged from, and what stops it.
	hrs       client.Reader
	stopWatch func()

	// Valid after startController: the controller's processes and their
	// metrics addresses (one each without shards), metricsAddr the first
	// one's (the profiles are read from it), and when they were started.
	metricsAddr  string
	shards       []*testenv.Process
	metricsAddrs []string
	started      time.Time
	// profiled is closed once the convergence's CPU profile is read.
	profiled chan struct{}

	// Valid after converge and steadyState: when every HelmRelease was in
	// sync, and the samples that open and close the window.
	converged                time.Time
	windowStart, windowEnd   sample
	convergence, steadyState Window

	res Result
}

// Run measures the controller t on a fleet of n releases of shape fleet, on
// a control plane of its own that it stops before returning, and leaves the
// controller's log (and, for a failed run or with cfg.KeepAudit, the audit
// log) in dir.
func Run(ctx context.Context, cfg Config, t Target, fleet Fleet, n int, dir string, logf func(format string, args ...any)) (res Result, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Result{}, err
	}
	r := &run{cfg: cfg, n: n, fleet: fleet, target: t, dir: dir, logf: logf,
		res: Result{Controller: t.Name, N: n, Fleet: fleet.Name, TemplatesPerRelease: fleet.Templates, DriftedPerRelease: fleet.Drifted, Shards: t.Shards,
			WindowSeconds: cfg.Window.Seconds(), ResyncSeconds: cfg.Resync.Seconds()}}
	defer func() { r.stop(err == nil) }()
	steps := []struct {
		name string
		do   func(context.Context) error
	}{
		{"start the control plane", r.startControlPlane},
		{"create the fleet", r.createFleet},
		{"sample the idle API server", r.sampleIdle},
		{"watch the HelmReleases", r.watchHelmReleases},
		{"start the controller", r.startController},
		{"converge", r.converge},
		{"measure the steady state", r.measureSteadyState},
		{"count the requests", r.countRequests},
		{"measure the reaction to a drift", r.measureReaction},
		{"measure the write floor", r.measureFloor},
	}
	for _, s := range steps {
		logf("N=%d %s %s: %s", n, fleet.Name, t.Name, s.name)
		if err := s.do(ctx); err != nil {
			return r.res, fmt.Errorf("failed to %s with %d releases (%s, fleet %s): %w", s.name, n, t.Name, fleet.Name, err)
		}
	}
	return r.res, nil
}

// startControlPlane starts kube-apiserver and etcd with the audit log on
// and the kinds of a management cluster of the fleet's shape (the Cluster
// API and Metal3 providers' CRDs less the fleet's omitted kinds, without
// their managers and so without webhooks, and those the target needs),
// and adds the controller's user: a member of system:masters, or under the
// lockdown a user of no group bound to the chart's lockdown role.
func (r *run) startControlPlane(ctx context.Context) error {
	policy := harness.MetadataPolicy
	if r.floorMeasured() {
		// The replay of the write floor sends the writes' bodies again.
		policy = writesPolicy(r.target.User)
	}
	flags, auditLog, err := harness.AuditFlags(r.dir, policy)
	if err != nil {
		return err
	}
	start := time.Now()
	env, err := testenv.StartWith("bench-"+strconv.Itoa(r.n)+"-"+r.fleet.Name+"-"+r.target.Name,
		testenv.Options{ProviderCRDs: true, APIServerFlags: flags, ExtraCRDDirs: r.target.CRDDirs, OmitKinds: r.fleet.Omit})
	if err != nil {
		return err
	}
	r.env, r.auditLog = env, auditLog
	r.res.ControlPlaneStartSeconds = time.Since(start).Seconds()
	groups := []string{"system:masters"}
	if r.target.Lockdown {
		groups = nil
	}
	if r.kubeconfig, err = env.AddUser(r.target.User, groups); err != nil {
		return err
	}
	if r.target.Lockdown {
		if err := BindLockdownRole(ctx, env, r.target.User); err != nil {
			return err
		}
	}
	if r.apiServerPID, err = harness.ChildRunning(env.Paths.APIServer); err != nil {
		return err
	}
	r.etcdPID, err = harness.ChildRunning(env.Paths.Etcd)
	return err
}

// createFleet creates the fleet, helm-controller's with its chart server,
// and under the lockdown each namespace's tenant account.
func (r *run) createFleet(ctx context.Context) error {
	start := time.Now()
	if r.target.IsHelmController() {
		var err error
		if r.chart, err = ServeChart(); err != nil {
			return err
		}
	}
	if err := createFleet(ctx, r.env, r.n, r.target.Shards, r.cfg.Resync, r.chart, r.fleet.Render); err != nil {
		return err
	}
	if err := labelShards(ctx, r.env.Client, r.n, r.target.Shards); err != nil {
		return err
	}
	if r.target.Lockdown {
		for i := range r.n {
			if err := testenv.GrantTenant(ctx, r.env.Client, Namespace(i), TenantAccount, testenv.TenantRules()); err != nil {
				return err
			}
		}
	}
	r.res.SetupSeconds = time.Since(start).Seconds()
	return nil
}

// sampleIdle measures the API server's own CPU use with the fleet in
// place and no controller: the floor under the per-reconcile figure.
func (r *run) sampleIdle(ctx context.Context) error {
	before, err := harness.CPUTime(r.apiServerPID)
	if err != nil {
		return err
	}
	start := time.Now()
	if err := harness.Sleep(ctx, r.cfg.Idle); err != nil {
		return err
	}
	after, err := harness.CPUTime(r.apiServerPID)
	if err != nil {
		return err
	}
	r.res.APIServerIdleCPUMsPerSecond = float64(after-before) / float64(time.Millisecond) / time.Since(start).Seconds()
	return nil
}

// startController runs the controller as its user, with its metrics and
// health endpoints on loopback, and waits until it serves; with shards,
// one process a shard, each on its own ports and log.
func (r *run) startController(_ context.Context) error {
	r.started = time.Now()
	for k := range max(r.target.Shards, 1) {
		name := r.target.Name
		if r.target.Shards > 1 {
			name += "-" + ShardName(k)
		}
		var addr string
		p, err := testenv.StartServing(name, r.target.Bin, 2, 1, func(a []string) []string {
			addr = a[0]
			flags := append([]string{"--metrics-addr=" + a[0], "--health-addr=" + a[1]}, r.target.Flags...)
			return append(flags, shardFlags(k, r.target.Shards)...)
		}, append([]string{"KUBECONFIG=" + r.kubeconfig}, r.target.Env...), r.dir)
		if err != nil {
			r.stopShards()
			return err
		}
		r.shards, r.metricsAddrs = append(r.shards, p), append(r.metricsAddrs, addr)
	}
	r.metricsAddr = r.metricsAddrs[0]
	r.profiled = r.profileConvergence(context.Background())
	return nil
}

// stop stops the controller, the chart server and the control plane, and
// removes the audit log of a successful run unless it is to be kept.
func (r *run) stop(ok bool) {
	if r.profiled != nil {
		<-r.profiled
	}
	r.stopShards()
	if r.stopWatch != nil {
		r.stopWatch()
	}
	r.chart.Close()
	if r.env != nil {
		if err := r.env.Stop(); err != nil {
			r.logf("N=%d: %v", r.n, err)
		}
	}
	if ok && !r.cfg.KeepAudit && r.auditLog != "" {
		_ = os.Remove(r.auditLog)
	}
}
