package chaos

import (
	"context"
	"fmt"
	"path/filepath"
	"time"
)

// Input is what every scenario's spec takes.
type Input struct {
	// N is the number of opted-in releases of the fleet (at least 3, one
	// of each case).
	N int
	// Seed seeds the random fault times, so that a run can be repeated.
	Seed int64
	// Bin is the controller binary; Dir the folder of its log and of the
	// audit log.
	Bin, Dir string
	// Managers runs the real Cluster API and Metal3 managers and their
	// webhooks on the control plane: the fleet's data templates are held
	// by claims and CAPM3's finalizer, and their invariants are checked.
	Managers bool
	// KeepAudit keeps the audit log of a run whose invariants held; a
	// failed run's is always kept.
	KeepAudit bool
	Logf      func(format string, args ...any)
}

// The harness's timing, the same in every scenario.
const (
	// resync is the controller's --resync-interval and every HelmRelease's
	// spec.interval: short enough that a missed event is caught in a run.
	resync = 30 * time.Second
	// settle is how long the harness waits after convergence before it
	// checks the invariants, for the passes still in flight.
	settle = 5 * time.Second
	// convergeTimeout bounds the wait for convergence after the faults
	// stop: a fleet that does not converge in it fails the invariant.
	convergeTimeout = 10 * time.Minute
)

// Run runs scenario with cfg's sizes, the controller binary bin, its
// artifacts in dir: the matrix's one table of which spec each name runs.
func Run(ctx context.Context, cfg Config, scenario, bin, dir string, logf func(format string, args ...any)) (Result, error) {
	in := Input{N: cfg.N, Seed: cfg.Seed, Bin: bin, Dir: dir, Managers: cfg.WithManagers(scenario), KeepAudit: cfg.KeepAudit, Logf: logf}
	switch scenario {
	case ScenarioKill:
		return KillSpec(ctx, KillInput{Input: in, Kills: cfg.Kills})
	case ScenarioRestart:
		return RestartSpec(ctx, RestartInput{Input: in, Restarts: cfg.Restarts})
	case ScenarioCompact:
		return CompactSpec(ctx, RestartInput{Input: in, Restarts: cfg.Restarts})
	case ScenarioRace:
		return RaceSpec(ctx, in)
	case ScenarioFailover:
		return FailoverSpec(ctx, in)
	case ScenarioLossy:
		return LossySpec(ctx, in)
	case ScenarioTenants:
		return TenantsSpec(ctx, in)
	case ScenarioMemory:
		return MemorySpec(ctx, MemoryInput{Input: in, Rewrites: cfg.Rewrites})
	case ScenarioSoak:
		return SoakSpec(ctx, SoakInput{Input: in, For: cfg.SoakFor, Kills: cfg.Kills > 0})
	}
	return Result{}, fmt.Errorf("unknown scenario %q", scenario)
}

// in returns in with its artifacts in the sub-folder dir.
func (in Input) in(dir string) Input {
	in.Dir = filepath.Join(in.Dir, dir)
	return in
}
