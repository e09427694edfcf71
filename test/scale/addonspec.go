package scale

import (
	"context"
	"path/filepath"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/internal/testenv"
	"github.com/templatedrift/template-drift-controller/test/harness"
)

// Addon is the add-on's build and how it runs, the same in its two
// measurements.
type Addon struct {
	// Bin is its binary: the working tree's (BuildController), or
	// BENCH_CONTROLLER_BIN.
	Bin string
	// Flags are its flags besides the loopback addresses
	// (ControllerFlags), and Env more environment besides KUBECONFIG
	// (BENCH_CONTROLLER_ENV).
	Flags []string
	Env   []string
	// Shards is how many processes share the fleet (BENCH_SHARDS); 1 is
	// one, unsharded.
	Shards int
	// CPUProfile is how long a CPU profile is read from its start
	// (BENCH_CPU_PROFILE); 0 reads none.
	CPUProfile time.Duration
}

// AddonSpecInput is what AddonSpec takes.
type AddonSpecInput struct {
	Run
	Addon
	// Floor measures the write floor after the run (BENCH_FLOOR).
	Floor bool
}

// AddonSpec measures the add-on on a fleet, as a member of system:masters,
// on a control plane of its own: its convergence, its steady state, its
// reaction to a drift, and with in.Floor its write floor. It leaves the
// controller's log and profiles in in.Dir.
func AddonSpec(ctx context.Context, in AddonSpecInput) (res Result, err error) {
	s, res, err := begin(in.Run, TemplateDriftController)
	if err != nil {
		return res, err
	}
	defer func() { s.end(err == nil) }()
	c := in.process()
	policy := harness.MetadataPolicy
	if in.Floor {
		// The floor's replay sends the writes' bodies again.
		policy = writesPolicy(c.user)
	}
	s.by("start the control plane")
	cp, err := startControlPlane(s, controlPlaneInput{policy: policy, user: c.user, groups: masters})
	if err != nil {
		return res, s.failed(err)
	}
	res.ControlPlaneStartSeconds = cp.startSeconds
	s.by("create the fleet")
	if res.SetupSeconds, err = timed(func() error { return createAddonFleet(ctx, cp.env, in.Run, in.Shards) }); err != nil {
		return res, s.failed(err)
	}
	p, convergence, err := measureAddon(ctx, s, &res, cp, c, in.CPUProfile)
	if err != nil || !in.Floor {
		return res, err
	}
	s.by("measure the write floor")
	p.stop()
	res.Floor, err = FloorSpec(ctx, FloorSpecInput{Fleet: in.Fleet, N: in.N, AuditLog: cp.auditLog, User: c.user, Convergence: convergence,
		Flags: c.flags, Shards: c.shards, Dir: filepath.Join(in.Dir, "floor"), Logf: in.Logf})
	if err != nil {
		return res, s.failed(err)
	}
	return res, nil
}

// LockdownSpecInput is what LockdownSpec takes: the add-on as AddonSpec
// runs it; the spec adds the lockdown.
type LockdownSpecInput struct {
	Run
	Addon
}

// LockdownSpec measures the add-on under the multi-tenancy lockdown: its
// user has no group and only the chart's lockdown role (BindLockdownRole),
// every release's namespace has the TenantAccount it impersonates
// (--default-service-account), and the measures are AddonSpec's but the
// write floor, whose writes would be a tenant's.
func LockdownSpec(ctx context.Context, in LockdownSpecInput) (res Result, err error) {
	s, res, err := begin(in.Run, Lockdown)
	if err != nil {
		return res, err
	}
	defer func() { s.end(err == nil) }()
	c := in.lockdownProcess()
	s.by("start the control plane")
	cp, err := startControlPlane(s, controlPlaneInput{policy: harness.MetadataPolicy, user: c.user})
	if err == nil {
		err = BindLockdownRole(ctx, cp.env, c.user)
	}
	if err != nil {
		return res, s.failed(err)
	}
	res.ControlPlaneStartSeconds = cp.startSeconds
	s.by("create the fleet")
	res.SetupSeconds, err = timed(func() error {
		if err := createAddonFleet(ctx, cp.env, in.Run, in.Shards); err != nil {
			return err
		}
		return grantTenants(ctx, cp.env.Client, in.N)
	})
	if err != nil {
		return res, s.failed(err)
	}
	_, _, err = measureAddon(ctx, s, &res, cp, c, in.CPUProfile)
	return res, err
}

// measureAddon runs the steps the add-on's two specs share, once its
// fleet is in place: the idle API server, the controller c from its start
// to its convergence, its steady state, its requests, and its reaction to
// a drift. It returns c's processes, still running, and its convergence
// window, which the write floor replays.
func measureAddon(ctx context.Context, s *session, res *Result, cp *controlPlane, c controller, cpuProfile time.Duration) (*processes, Window, error) {
	hrs, p, err := startMeasuring(ctx, s, res, cp, c)
	if err != nil {
		return nil, Window{}, err
	}
	profileConvergence(s, p, cpuProfile)
	s.by("converge")
	figures := &AddonFigures{Shards: c.shards}
	convergence, cpu, err := convergeAddon(ctx, s, hrs, p, figures)
	if err == nil {
		err = s.run.Fleet.Healed(ctx, cp.env.Client, s.run.N)
	}
	if err != nil {
		return nil, Window{}, s.failed(err)
	}
	s.by("measure the steady state")
	st, err := measureSteadyState(ctx, s.run.Window, cp, p)
	if err == nil {
		figures.ShardMemory = st.each
		err = readAddonMemory(ctx, s.run.Dir, p, figures)
	}
	if err != nil {
		return nil, Window{}, s.failed(err)
	}
	s.by("count the requests")
	if err := collect(ctx, res, cp, c.user, convergence, cpu, st); err != nil {
		return nil, Window{}, s.failed(err)
	}
	s.by("measure the reaction to a drift")
	if figures.Reactions, err = measureReactions(ctx, cp.env.Client, s.run.Fleet.React, s.run.N); err != nil {
		return nil, Window{}, s.failed(err)
	}
	res.Addon = figures
	return p, convergence, nil
}

// convergeAddon waits until every HelmRelease reports TemplatesInSync=True,
// then reads where the convergence went from the add-on's metrics.
func convergeAddon(ctx context.Context, s *session, hrs *hrWatch, p *processes, figures *AddonFigures) (Window, time.Duration, error) {
	convergence, cpu, err := converge(ctx, s, hrs, p, notInSync)
	if err != nil {
		return convergence, cpu, err
	}
	if figures.Breakdown, err = p.breakdown(); err != nil {
		return convergence, cpu, err
	}
	figures.Breakdown.CPUSeconds = cpu.Seconds()
	return convergence, cpu, nil
}

// readAddonMemory reads, at the window's end, where the add-on's memory
// goes as its Go runtime says, and saves its heap profile.
func readAddonMemory(ctx context.Context, dir string, p *processes, figures *AddonFigures) error {
	var err error
	if figures.GoMemory, err = ReadGoMemory(p.metricsAddr()); err != nil {
		return err
	}
	return saveSteadyHeap(ctx, dir, p)
}

// createAddonFleet creates the add-on's fleet: with shards, every
// HelmRelease and every object of its release labelled for its shard.
func createAddonFleet(ctx context.Context, env *testenv.Env, run Run, shards int) error {
	if err := createFleet(ctx, env, run.N, shards, resync, nil, run.Fleet.Render); err != nil {
		return err
	}
	return labelShards(ctx, env.Client, run.N, shards)
}

// grantTenants gives each release's namespace the tenant account the
// add-on impersonates under the lockdown.
func grantTenants(ctx context.Context, c client.Client, n int) error {
	for i := range n {
		if err := testenv.GrantTenant(ctx, c, Namespace(i), TenantAccount, testenv.TenantRules()); err != nil {
			return err
		}
	}
	return nil
}

// timed runs f and returns how long it took, in seconds.
func timed(f func() error) (float64, error) {
	start := time.Now()
	err := f()
	return time.Since(start).Seconds(), err
}
