package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/templatedrift/template-drift-controller/internal/testenv"
	"github.com/templatedrift/template-drift-controller/test/harness"
	"github.com/templatedrift/template-drift-controller/test/scale"
)

// run is one scenario on its own control plane. Its fields become valid
// step by step, in the order of Run's steps.
type run struct {
	cfg      Config
	scenario string
	bin      string
	dir      string
	rng      *rand.Rand
	logf     func(format string, args ...any)

	// faultRate is the share of requests the lossy scenario's proxy
	// faults (0 in its fault-free run), and faultFree that run's result
	// (nil in the fault-free run itself).
	faultRate float64
	faultFree *Result

	// Valid after startControlPlane: kubeconfig is the controller user's,
	// through the proxy in the lossy scenario.
	env        *testenv.Env
	auditLog   string
	kubeconfig string
	proxy      *Proxy

	// Valid after createFleet: the fleet, and the HelmReleases a scenario
	// adds to its cfg.N (the tenants scenario's hostile ones), by
	// namespace/name, with what their condition must say.
	fleet  Fleet
	extras map[string]expectation
	// added counts the HelmReleases a scenario adds to cfg.N (the memory
	// scenario's rewriters and large releases, the tenants scenario's
	// extras).
	added int
	// sampler samples the controller's memory from the memory scenario's
	// fault through its check.
	sampler *harness.Sampler

	// Valid after the first startController: the controller process (a new
	// one after each kill), and when the first was started.
	controller *testenv.Process
	started    time.Time
	// others are the failover scenario's other replicas, stopped with it.
	others []*testenv.Process

	// Valid after the fault: when it stopped, and what the scenario accepts
	// as converged besides TemplatesInSync=True.
	faultsDone time.Time
	// faultsFrom is when the compact scenario's faults began.
	faultsFrom time.Time
	accept     func(hr *helmv2.HelmRelease, c *metav1.Condition) bool

	// Valid after the race fault: the objects the other writer set back,
	// and its stored writes to each, by scopeKey.
	raceTargets []raceTarget
	raced       map[string]int

	// Valid after createFleet with the real managers: the claimed data
	// templates, with the claim naming each, and the MachineSets when the
	// controller started.
	claimed     map[ObjectKey]string
	machineSets map[ObjectKey]bool

	res Result
}

// Run runs scenario on a fleet of cfg.N releases, on a control plane of
// its own that it stops before returning, with the controller binary bin,
// and leaves the controller's log (and the audit log of a scenario whose
// invariants failed, or with cfg.KeepAudit) in dir. The lossy scenario
// first runs the same fleet through the same proxy without faults, on a
// control plane of its own (in dir/fault-free), and compares.
func Run(ctx context.Context, cfg Config, scenario, bin, dir string, logf func(format string, args ...any)) (Result, error) {
	if scenario != ScenarioLossy {
		return runOnce(ctx, &run{cfg: cfg, scenario: scenario, bin: bin, dir: dir, logf: logf})
	}
	faultFree, err := runOnce(ctx, &run{cfg: cfg, scenario: scenario, bin: bin, dir: filepath.Join(dir, "fault-free"), logf: logf})
	if err != nil {
		return Result{Scenario: scenario, N: cfg.N, FaultFree: &faultFree}, err
	}
	return runOnce(ctx, &run{cfg: cfg, scenario: scenario, bin: bin, dir: dir, logf: logf, faultRate: cfg.FaultRate, faultFree: &faultFree})
}

// runOnce runs r's steps.
func runOnce(ctx context.Context, r *run) (res Result, err error) {
	if err := os.MkdirAll(r.dir, 0o755); err != nil {
		return Result{}, err
	}
	r.rng = rand.New(rand.NewPCG(uint64(r.cfg.Seed), uint64(len(r.scenario)))) //nolint:gosec // fault times, not secrets
	r.res = Result{Scenario: r.scenario, N: r.cfg.N, Violations: map[string][]string{}, FaultFree: r.faultFree}
	scenario, logf := r.scenario, r.logf
	if r.scenario == ScenarioLossy && r.faultFree == nil {
		scenario = faultFreeRow
	}
	defer func() { r.stop(err == nil && r.res.Held()) }()
	steps := []struct {
		name string
		do   func(context.Context) error
	}{
		{"start the control plane", r.startControlPlane},
		{"create the fleet", r.createFleet},
		{"start the controller", r.startController},
		{"inject the fault", r.inject},
		{"converge", r.converge},
		{"check the invariants", r.check},
	}
	for _, s := range steps {
		logf("%s: %s", scenario, s.name)
		if err := s.do(ctx); err != nil {
			return r.res, fmt.Errorf("failed to %s in scenario %s: %w", s.name, scenario, err)
		}
	}
	return r.res, nil
}

func (r *run) startControlPlane(ctx context.Context) error {
	flags, auditLog, err := harness.AuditFlags(r.dir, auditPolicy)
	if err != nil {
		return err
	}
	if r.scenario == ScenarioCompact {
		for k, v := range compactFlags() {
			flags[k] = v
		}
	}
	env, err := testenv.StartWith("chaos-"+r.scenario, testenv.Options{ProviderCRDs: true, Managers: r.cfg.WithManagers(r.scenario), APIServerFlags: flags})
	if err != nil {
		return err
	}
	r.env, r.auditLog = env, auditLog
	groups := []string{"system:masters"}
	if r.scenario == ScenarioTenants {
		// The lockdown's own role, bound below: nothing more.
		groups = nil
	}
	if r.kubeconfig, err = env.AddUser(ControllerUser, groups); err != nil {
		return err
	}
	switch r.scenario {
	case ScenarioTenants:
		if err := scale.BindLockdownRole(ctx, env, ControllerUser); err != nil {
			return err
		}
	case ScenarioFailover:
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: runtimeNamespace}}
		if err := env.Client.Create(ctx, ns); err != nil {
			return fmt.Errorf("failed to create the runtime namespace: %w", err)
		}
	case ScenarioLossy:
		if r.proxy, err = StartProxy(r.kubeconfig, FaultPlan{Rate: r.faultRate, Seed: r.cfg.Seed}); err != nil {
			return err
		}
		r.kubeconfig = r.proxy.Kubeconfig
	}
	return nil
}

func (r *run) createFleet(ctx context.Context) error {
	start := time.Now()
	f, err := CreateFleet(ctx, r.env, r.cfg.N, r.cfg.Resync, r.cfg.WithManagers(r.scenario))
	r.fleet = f
	if err == nil {
		switch r.scenario {
		case ScenarioTenants:
			err = r.createTenants(ctx)
		case ScenarioMemory:
			err = r.createMemoryFleet(ctx)
		}
	}
	if err == nil && f.Managers {
		if err = r.createClaims(ctx); err == nil {
			err = r.waitAdopted(ctx)
		}
	}
	r.res.N = r.cfg.N + r.added
	r.res.SetupSeconds = time.Since(start).Seconds()
	return err
}

// startController starts the controller as its user and waits until it
// serves; its log goes on in the same file across restarts.
func (r *run) startController(_ context.Context) error {
	p, err := r.startReplica("template-drift-controller")
	if err != nil {
		return err
	}
	if r.started.IsZero() {
		r.started = time.Now()
	}
	r.controller = p
	return nil
}

// startReplica starts a controller process as the controller user, its
// log in dir/name.log, and waits until it serves: in the failover scenario
// with leader election, its Lease in runtimeNamespace.
func (r *run) startReplica(name string) (*testenv.Process, error) {
	flags := scale.ControllerFlags(scale.Config{Resync: r.cfg.Resync})
	env := []string{"KUBECONFIG=" + r.kubeconfig}
	switch r.scenario {
	case ScenarioFailover:
		flags = append(flags, leaderElectionFlags(r.cfg.Lease)...)
		env = append(env, "RUNTIME_NAMESPACE="+runtimeNamespace)
	case ScenarioTenants:
		flags = append(flags, "--default-service-account="+scale.TenantAccount)
	case ScenarioSoak:
		env = append(env, soakProfileRate)
	}
	return testenv.StartServing(name, r.bin, 2, 1, func(a []string) []string {
		return append([]string{"--metrics-addr=" + a[0], "--health-addr=" + a[1]}, flags...)
	}, env, r.dir)
}

// samplePeak folds the running controller's peak RSS into the result's
// largest peak of every process so far.
func (r *run) samplePeak() { r.samplePeakOf(r.controller) }

// converge waits until every HelmRelease has converged, then the settle
// time, and checks again: a fleet that is not converged then, or not by
// the timeout, fails the converged invariant (not the run).
func (r *run) converge(ctx context.Context) error {
	var pending map[string]int
	logged := time.Now()
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, r.cfg.ConvergeTimeout, true, func(ctx context.Context) (bool, error) {
		if r.controller.Exited() {
			return false, fmt.Errorf("the controller exited (see %s)", r.controller.LogPath)
		}
		var err error
		if pending, err = r.pending(ctx); err != nil {
			return false, nil //nolint:nilerr // the API server may be coming back: poll on
		}
		if time.Since(logged) > 15*time.Second {
			r.logf("%s: %s after the faults, not converged yet by reason: %v", r.scenario, time.Since(r.faultsDone).Round(time.Second), pending)
			logged = time.Now()
		}
		return len(pending) == 0, nil
	})
	r.samplePeak()
	if err != nil {
		r.res.violate(InvConverged, fmt.Sprintf("not converged %s after the faults stopped: %v (%v)", r.cfg.ConvergeTimeout, pending, err))
		return nil
	}
	now := time.Now()
	r.res.ConvergeSeconds = now.Sub(r.faultsDone).Seconds()
	r.res.TotalSeconds = now.Sub(r.started).Seconds()
	if err := harness.Sleep(ctx, r.cfg.Settle); err != nil {
		return err
	}
	if pending, err = r.pending(ctx); err != nil {
		return err
	}
	if len(pending) > 0 {
		r.res.violate(InvConverged, fmt.Sprintf("converged, then not %s later: %v", r.cfg.Settle, pending))
	}
	return nil
}

// pending counts the HelmReleases not converged, by reason ("none" for no
// condition yet).
func (r *run) pending(ctx context.Context) (map[string]int, error) {
	var list helmv2.HelmReleaseList
	if err := r.env.Client.List(ctx, &list); err != nil {
		return nil, err
	}
	if want := r.cfg.N + r.added; len(list.Items) != want {
		return nil, fmt.Errorf("found %d HelmReleases, want %d", len(list.Items), want)
	}
	pending := Pending(list.Items, r.accept)
	if r.scenario == ScenarioCompact {
		// A release whose informers missed a drift reports itself in sync:
		// the drifts themselves must be healed.
		n, err := r.unhealed(ctx)
		if err != nil {
			return nil, err
		}
		if n > 0 {
			pending[unhealedReason] = n
		}
	}
	return pending, nil
}

// stop stops the controller and the control plane, and removes the audit
// log of a scenario whose invariants held unless it is to be kept.
func (r *run) stop(ok bool) {
	for _, p := range r.others {
		p.Stop()
	}
	r.controller.Stop()
	r.proxy.Close()
	if r.env != nil {
		if err := r.env.Stop(); err != nil {
			r.logf("%s: %v", r.scenario, err)
		}
	}
	if ok && !r.cfg.KeepAudit && r.auditLog != "" {
		_ = os.Remove(r.auditLog)
	}
}
