package chaos

import (
	"context"
	"fmt"
	"time"

	"github.com/templatedrift/template-drift-controller/test/harness"
)

// inject runs the scenario's fault, then records how much of the fleet had
// converged when it stopped.
func (r *run) inject(ctx context.Context) error {
	var err error
	switch r.scenario {
	case ScenarioKill:
		err = r.kill(ctx)
	case ScenarioRestart:
		err = r.restartAPIServer(ctx)
	case ScenarioCompact:
		err = r.compact(ctx)
	case ScenarioRace:
		err = r.race(ctx)
	case ScenarioFailover:
		err = r.failover(ctx)
	case ScenarioLossy:
		r.lossy()
	case ScenarioTenants:
		err = r.tenants(ctx)
	case ScenarioMemory:
		err = r.memory(ctx)
	case ScenarioSoak:
		err = r.soak(ctx)
	default:
		err = fmt.Errorf("unknown scenario %q", r.scenario)
	}
	if err != nil {
		return err
	}
	r.faultsDone = time.Now()
	if r.scenario == ScenarioLossy {
		// The proxy faults until the end: convergence is timed from the
		// controller's start, and no release is in sync when faults stop.
		r.faultsDone = r.started
		return nil
	}
	if pending, err := r.pending(ctx); err == nil {
		r.res.InSyncWhenFaultsStopped = r.res.N - total(pending)
	}
	return nil
}

// between draws a duration in [lo, hi].
func (r *run) between(lo, hi time.Duration) time.Duration {
	return lo + time.Duration(r.rng.Int64N(int64(hi-lo)+1))
}

// kill lets the controller run for a random time, SIGKILLs it and starts
// it again, cfg.Kills times; the last one started runs on. Up to killLead
// before each kill it drifts some objects afresh (driftAfresh), so that
// the kills land in corrections in flight, not only on a fleet at rest.
func (r *run) kill(ctx context.Context) error {
	r.res.Fault = fmt.Sprintf("%d SIGKILLs, each after %s-%s, %d objects drifted afresh up to %s before each",
		r.cfg.Kills, r.cfg.KillMin, r.cfg.KillMax, killDrifts(r.cfg.N), killLead)
	r.raced = map[string]int{}
	for i := range r.cfg.Kills {
		wait := r.between(r.cfg.KillMin, r.cfg.KillMax)
		lead := min(wait, r.between(0, killLead))
		if err := harness.Sleep(ctx, wait-lead); err != nil {
			return err
		}
		if err := r.driftAfresh(ctx, i); err != nil {
			return err
		}
		if err := harness.Sleep(ctx, lead); err != nil {
			return err
		}
		r.samplePeak()
		r.controller.Kill()
		r.logf("%s: killed the controller (%d of %d)", r.scenario, i+1, r.cfg.Kills)
		if err := r.startController(ctx); err != nil {
			return err
		}
	}
	return nil
}

// restartAPIServer restarts kube-apiserver on the same etcd cfg.Restarts
// times, 1-5 s apart, while the controller corrects; the controller is
// never restarted, and must not exit.
func (r *run) restartAPIServer(ctx context.Context) error {
	r.res.Fault = fmt.Sprintf("%d kube-apiserver restarts (same etcd), 1s-5s apart", r.cfg.Restarts)
	pid := r.controller.PID()
	for i := range r.cfg.Restarts {
		if err := harness.Sleep(ctx, r.between(time.Second, 5*time.Second)); err != nil {
			return err
		}
		start := time.Now()
		if err := r.env.RestartAPIServer(); err != nil {
			return err
		}
		r.logf("%s: restarted kube-apiserver (%d of %d) in %s", r.scenario, i+1, r.cfg.Restarts, time.Since(start).Round(time.Millisecond))
	}
	if r.controller.Exited() || r.controller.PID() != pid {
		r.res.violate(InvConverged, "the controller exited during the API server restarts (see "+r.controller.LogPath+")")
	}
	return nil
}
