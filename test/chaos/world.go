package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/templatedrift/template-drift-controller/internal/testenv"
	"github.com/templatedrift/template-drift-controller/test/harness"
	"github.com/templatedrift/template-drift-controller/test/scale"
)

// A world is what every scenario runs in: a control plane of its own with
// an audit log, the fleet, the controller, and the scenario's row of the
// matrix. A scenario's spec makes one with newWorld, sets it up, runs its
// fault, then converge and check; what only one scenario needs stays in
// that spec.
type world struct {
	in   Input
	name string
	opts worldOptions
	rng  *rand.Rand

	env        *testenv.Env
	auditLog   string
	kubeconfig string
	proxy      *Proxy
	fleet      Fleet
	// added counts the releases a scenario adds to in.N.
	added int
	// managed is what the real managers hold, with in.Managers.
	managed *managed

	// controller is the running controller (a new one after each kill),
	// others the replicas stopped with it; started is the first start.
	controller *testenv.Process
	others     []*testenv.Process
	started    time.Time
	// faultsDone is when the fault stopped: convergence is timed from it.
	faultsDone time.Time

	res Result
}

// worldOptions are how a scenario's world differs from the plain one.
type worldOptions struct {
	// apiServerFlags are kube-apiserver's flags besides the audit log's.
	apiServerFlags map[string]string
	// lockdown runs the controller as the chart's lockdown role alone, with
	// --default-service-account.
	lockdown bool
	// leaderElection runs the controller with leader election, its Lease in
	// runtimeNamespace.
	leaderElection bool
	// faults puts a fault-injecting proxy between the controller and the
	// API server.
	faults *FaultPlan
	// controllerEnv are environment variables of the controller.
	controllerEnv []string
	// accept is what the scenario accepts as converged besides
	// TemplatesInSync=True; unhealed counts, among the releases not
	// converged, the scenario's drifts not healed yet.
	accept   func(hr *helmv2.HelmRelease, c *metav1.Condition) bool
	unhealed func(ctx context.Context) (int, error)
}

// newWorld is the world of one run of scenario name, set up by setUp.
func newWorld(in Input, name string, opts worldOptions) *world {
	return &world{in: in, name: name, opts: opts,
		rng: rand.New(rand.NewPCG(uint64(in.Seed), uint64(len(name)))), //nolint:gosec // fault times, not secrets
		res: Result{Scenario: name, N: in.N, Violations: map[string][]string{}}}
}

// step logs a step of the scenario and names it in its error.
func (w *world) step(name string, do func() error) error {
	w.in.Logf("%s: %s", w.name, name)
	if err := do(); err != nil {
		return fmt.Errorf("failed to %s in scenario %s: %w", name, w.name, err)
	}
	return nil
}

// setUp starts the control plane, creates the fleet (then what more adds
// to it, and with the managers, their claims) and starts the controller.
func (w *world) setUp(ctx context.Context, more func(context.Context) error) error {
	if err := os.MkdirAll(w.in.Dir, 0o755); err != nil {
		return err
	}
	if err := w.step("start the control plane", func() error { return w.startControlPlane(ctx) }); err != nil {
		return err
	}
	if err := w.step("create the fleet", func() error { return w.createFleet(ctx, more) }); err != nil {
		return err
	}
	return w.step("start the controller", w.startController)
}

func (w *world) startControlPlane(ctx context.Context) error {
	flags, auditLog, err := harness.AuditFlags(w.in.Dir, auditPolicy)
	if err != nil {
		return err
	}
	for k, v := range w.opts.apiServerFlags {
		flags[k] = v
	}
	env, err := testenv.StartWith("chaos-"+w.res.Scenario, testenv.Options{ProviderCRDs: true, Managers: w.in.Managers, APIServerFlags: flags})
	if err != nil {
		return err
	}
	w.env, w.auditLog = env, auditLog
	groups := []string{"system:masters"}
	if w.opts.lockdown {
		// The lockdown's own role, bound below: nothing more.
		groups = nil
	}
	if w.kubeconfig, err = env.AddUser(ControllerUser, groups); err != nil {
		return err
	}
	if w.opts.lockdown {
		if err := scale.BindLockdownRole(ctx, env, ControllerUser); err != nil {
			return err
		}
	}
	if w.opts.leaderElection {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: runtimeNamespace}}
		if err := env.Client.Create(ctx, ns); err != nil {
			return fmt.Errorf("failed to create the runtime namespace: %w", err)
		}
	}
	if w.opts.faults != nil {
		if w.proxy, err = StartProxy(w.kubeconfig, *w.opts.faults); err != nil {
			return err
		}
		w.kubeconfig = w.proxy.Kubeconfig
	}
	return nil
}

func (w *world) createFleet(ctx context.Context, more func(context.Context) error) error {
	start := time.Now()
	f, err := CreateFleet(ctx, w.env, w.in.N, resync, w.in.Managers)
	w.fleet = f
	if err == nil && more != nil {
		err = more(ctx)
	}
	if err == nil && w.in.Managers {
		w.managed, err = adopt(ctx, w)
	}
	w.res.N = w.in.N + w.added
	w.res.SetupSeconds = time.Since(start).Seconds()
	return err
}

// startController starts the controller as its user and waits until it
// serves; its log goes on in the same file across restarts.
func (w *world) startController() error {
	p, err := w.startReplica("template-drift-controller")
	if err != nil {
		return err
	}
	if w.started.IsZero() {
		w.started = time.Now()
	}
	w.controller = p
	return nil
}

// startReplica starts a controller process as the controller user, its
// log in Dir/name.log, and waits until it serves.
func (w *world) startReplica(name string) (*testenv.Process, error) {
	flags := scale.ControllerFlags(scale.Config{Resync: resync})
	env := append([]string{"KUBECONFIG=" + w.kubeconfig}, w.opts.controllerEnv...)
	if w.opts.leaderElection {
		flags = append(flags, leaderElectionFlags(lease)...)
		env = append(env, "RUNTIME_NAMESPACE="+runtimeNamespace)
	}
	if w.opts.lockdown {
		flags = append(flags, "--default-service-account="+scale.TenantAccount)
	}
	return testenv.StartServing(name, w.in.Bin, 2, 1, func(a []string) []string {
		return append([]string{"--metrics-addr=" + a[0], "--health-addr=" + a[1]}, flags...)
	}, env, w.in.Dir)
}

// restartController SIGKILLs the controller and starts it again.
func (w *world) restartController() error {
	w.samplePeak()
	w.controller.Kill()
	return w.startController()
}

// between draws a duration in [lo, hi].
func (w *world) between(lo, hi time.Duration) time.Duration {
	return lo + time.Duration(w.rng.Int64N(int64(hi-lo)+1))
}

// restartAPIServer restarts kube-apiserver on the same etcd.
func (w *world) restartAPIServer(i, of int) error {
	start := time.Now()
	if err := w.env.RestartAPIServer(); err != nil {
		return err
	}
	w.in.Logf("%s: restarted kube-apiserver (%d of %d) in %s", w.name, i, of, time.Since(start).Round(time.Millisecond))
	return nil
}

// faultsStopped records the end of the fault, and how much of the fleet
// had converged then.
func (w *world) faultsStopped(ctx context.Context) {
	w.faultsDone = time.Now()
	if pending, err := w.pending(ctx); err == nil {
		w.res.InSyncWhenFaultsStopped = w.res.N - total(pending)
	}
}

// samplePeak folds the running controller's peak RSS into the result's
// largest peak of every process so far.
func (w *world) samplePeak() { w.samplePeakOf(w.controller) }

// samplePeakOf folds p's peak RSS into the result's largest so far.
func (w *world) samplePeakOf(p *testenv.Process) {
	if pid := p.PID(); pid != 0 {
		if m, err := harness.ReadMemory(pid); err == nil {
			w.res.PeakRSSBytes = max(w.res.PeakRSSBytes, m.Peak)
		}
	}
}

// converge waits until every HelmRelease has converged, then the settle
// time, and checks again: a fleet that is not converged then, or not by
// the timeout, fails the converged invariant (not the run).
func (w *world) converge(ctx context.Context) error {
	return w.step("converge", func() error {
		var pending map[string]int
		logged := time.Now()
		err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, convergeTimeout, true, func(ctx context.Context) (bool, error) {
			if w.controller.Exited() {
				return false, fmt.Errorf("the controller exited (see %s)", w.controller.LogPath)
			}
			var err error
			if pending, err = w.pending(ctx); err != nil {
				return false, nil //nolint:nilerr // the API server may be coming back: poll on
			}
			if time.Since(logged) > 15*time.Second {
				w.in.Logf("%s: %s after the faults, not converged yet by reason: %v", w.name, time.Since(w.faultsDone).Round(time.Second), pending)
				logged = time.Now()
			}
			return len(pending) == 0, nil
		})
		w.samplePeak()
		if err != nil {
			w.res.violate(InvConverged, fmt.Sprintf("not converged %s after the faults stopped: %v (%v)", convergeTimeout, pending, err))
			return nil
		}
		now := time.Now()
		w.res.ConvergeSeconds = now.Sub(w.faultsDone).Seconds()
		w.res.TotalSeconds = now.Sub(w.started).Seconds()
		if err := harness.Sleep(ctx, settle); err != nil {
			return err
		}
		if pending, err = w.pending(ctx); err != nil {
			return err
		}
		if len(pending) > 0 {
			w.res.violate(InvConverged, fmt.Sprintf("converged, then not %s later: %v", settle, pending))
		}
		return nil
	})
}

// conclude waits for convergence, then checks every scenario's invariants
// (with c) and, given the controller's writes, the scenario's own (own;
// nil for none), and returns the scenario's row.
func (w *world) conclude(ctx context.Context, c checks, own func(writes []Write) error) (Result, error) {
	if err := w.converge(ctx); err != nil {
		return w.res, err
	}
	return w.res, w.step("check the invariants", func() error {
		writes, err := w.check(ctx, c)
		if err != nil || own == nil {
			return err
		}
		return own(writes)
	})
}

// waitInSync waits until at least n releases have converged, and returns
// how many have.
func (w *world) waitInSync(ctx context.Context, n int) (int, error) {
	inSync := 0
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, convergeTimeout, true, func(ctx context.Context) (bool, error) {
		if w.controller.Exited() {
			return false, fmt.Errorf("the controller exited (see %s)", w.controller.LogPath)
		}
		pending, err := w.pending(ctx)
		if err != nil {
			return false, nil //nolint:nilerr // the API server may be coming back: poll on
		}
		inSync = w.res.N - total(pending)
		return inSync >= n, nil
	})
	return inSync, err
}

// pending counts the HelmReleases not converged, by reason ("none" for no
// condition yet).
func (w *world) pending(ctx context.Context) (map[string]int, error) {
	var list helmv2.HelmReleaseList
	if err := w.env.Client.List(ctx, &list); err != nil {
		return nil, err
	}
	if want := w.in.N + w.added; len(list.Items) != want {
		return nil, fmt.Errorf("found %d HelmReleases, want %d", len(list.Items), want)
	}
	pending := Pending(list.Items, w.opts.accept)
	if w.opts.unhealed != nil {
		// A release whose informers missed a drift reports itself in sync:
		// the drifts themselves must be healed.
		n, err := w.opts.unhealed(ctx)
		if err != nil {
			return nil, err
		}
		if n > 0 {
			pending[unhealedReason] = n
		}
	}
	return pending, nil
}

// unhealedReason counts, among the releases not converged, the drifts not
// healed yet.
const unhealedReason = "drift not healed"

// total sums counts.
func total(counts map[string]int) int {
	n := 0
	for _, c := range counts {
		n += c
	}
	return n
}

// stop stops the controller and the control plane, and removes the audit
// log of a scenario whose invariants held unless it is to be kept. It is
// deferred by every spec with the spec's error.
func (w *world) stop(err error) {
	for _, p := range w.others {
		p.Stop()
	}
	w.controller.Stop()
	w.proxy.Close()
	if w.env != nil {
		if err := w.env.Stop(); err != nil {
			w.in.Logf("%s: %v", w.name, err)
		}
	}
	if err == nil && w.res.Held() && !w.in.KeepAudit && w.auditLog != "" {
		_ = os.Remove(w.auditLog)
	}
}
