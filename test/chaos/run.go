package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/templatedrift/template-drift-controller/internal/testenv"
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

	// Valid after startControlPlane.
	env        *testenv.Env
	auditLog   string
	kubeconfig string

	// Valid after createFleet.
	fleet Fleet

	// Valid after the first startController: the controller process (a new
	// one after each kill), and when the first was started.
	controller *testenv.Process
	started    time.Time

	// Valid after the fault: when it stopped, and what the scenario accepts
	// as converged besides TemplatesInSync=True.
	faultsDone time.Time
	accept     func(hr *helmv2.HelmRelease, c *metav1.Condition) bool

	// Valid after the race fault: the objects the other writer set back,
	// and its stored writes to each, by scopeKey.
	raceTargets []raceTarget
	raced       map[string]int

	res Result
}

// Run runs scenario on a fleet of cfg.N releases, on a control plane of
// its own that it stops before returning, with the controller binary bin,
// and leaves the controller's log (and the audit log of a scenario whose
// invariants failed, or with cfg.KeepAudit) in dir.
func Run(ctx context.Context, cfg Config, scenario, bin, dir string, logf func(format string, args ...any)) (res Result, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Result{}, err
	}
	r := &run{cfg: cfg, scenario: scenario, bin: bin, dir: dir, logf: logf,
		rng: rand.New(rand.NewPCG(uint64(cfg.Seed), uint64(len(scenario)))), //nolint:gosec // fault times, not secrets
		res: Result{Scenario: scenario, N: cfg.N, Violations: map[string][]string{}}}
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

func (r *run) startControlPlane(_ context.Context) error {
	flags, auditLog, err := scale.AuditFlagsWithPolicy(r.dir, auditPolicy)
	if err != nil {
		return err
	}
	env, err := testenv.StartWith("chaos-"+r.scenario, testenv.Options{ProviderCRDs: true, APIServerFlags: flags})
	if err != nil {
		return err
	}
	r.env, r.auditLog = env, auditLog
	r.kubeconfig, err = env.AddUser(ControllerUser, []string{"system:masters"})
	return err
}

func (r *run) createFleet(ctx context.Context) error {
	start := time.Now()
	f, err := CreateFleet(ctx, r.env, r.cfg.N, r.cfg.Resync)
	r.fleet = f
	r.res.SetupSeconds = time.Since(start).Seconds()
	return err
}

// startController starts the controller as its user and waits until it
// serves; its log goes on in the same file across restarts.
func (r *run) startController(_ context.Context) error {
	flags := scale.ControllerFlags(scale.Config{Resync: r.cfg.Resync})
	p, err := testenv.StartServing("template-drift-controller", r.bin, 2, 1, func(a []string) []string {
		return append([]string{"--metrics-addr=" + a[0], "--health-addr=" + a[1]}, flags...)
	}, []string{"KUBECONFIG=" + r.kubeconfig}, r.dir)
	if err != nil {
		return err
	}
	if r.started.IsZero() {
		r.started = time.Now()
	}
	r.controller = p
	return nil
}

// samplePeak folds the running controller's peak RSS into the result's
// largest peak of every process so far.
func (r *run) samplePeak() {
	if m, err := scale.ReadMemory(r.controller.PID()); err == nil {
		r.res.PeakRSSBytes = max(r.res.PeakRSSBytes, m.Peak)
	}
}

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
	if err := sleep(ctx, r.cfg.Settle); err != nil {
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
	if len(list.Items) != r.cfg.N {
		return nil, fmt.Errorf("found %d HelmReleases, want %d", len(list.Items), r.cfg.N)
	}
	return Pending(list.Items, r.accept), nil
}

// stop stops the controller and the control plane, and removes the audit
// log of a scenario whose invariants held unless it is to be kept.
func (r *run) stop(ok bool) {
	r.controller.Stop()
	if r.env != nil {
		if err := r.env.Stop(); err != nil {
			r.logf("%s: %v", r.scenario, err)
		}
	}
	if ok && !r.cfg.KeepAudit && r.auditLog != "" {
		_ = os.Remove(r.auditLog)
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
