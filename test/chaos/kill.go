package chaos

import (
	"context"
	"fmt"
	"time"

	"github.com/templatedrift/template-drift-controller/test/harness"
)

// KillInput is the kill scenario's.
type KillInput struct {
	Input
	// Kills is how many times the controller is SIGKILLed.
	Kills int
}

// The kill scenario's run time of the controller before each kill, drawn
// uniformly: from within the first pass to well into the convergence.
const (
	killLeast = time.Second
	killMost  = 10 * time.Second
)

// KillSpec lets the controller run for a random time, SIGKILLs it and
// starts it again, in.Kills times; the last one started runs on. Up to
// killLead before each kill it drifts some objects afresh, so that the
// kills land in corrections in flight, not only on a fleet at rest. Then
// the fleet must converge, each drift corrected once (no loop) and none
// reported in sync while drifted (no lost update).
func KillSpec(ctx context.Context, in KillInput) (res Result, err error) {
	d := newDrifts()
	w := newWorld(in.Input, ScenarioKill, worldOptions{})
	defer func() { w.stop(err) }()
	if err := w.setUp(ctx, nil); err != nil {
		return w.res, err
	}
	w.res.Fault = fmt.Sprintf("%d SIGKILLs, each after %s-%s, %d objects drifted afresh up to %s before each",
		in.Kills, killLeast, killMost, killDrifts(in.N), killLead)
	if err := w.step("inject the fault", func() error { return kill(ctx, w, d, in.Kills) }); err != nil {
		return w.res, err
	}
	w.faultsStopped(ctx)
	return w.conclude(ctx, checks{}, func(writes []Write) error { return d.check(ctx, w, writes) })
}

// kill SIGKILLs the controller kills times, each after a random run time,
// with objects drifted afresh shortly before.
func kill(ctx context.Context, w *world, d *drifts, kills int) error {
	for i := range kills {
		wait := w.between(killLeast, killMost)
		lead := min(wait, w.between(0, killLead))
		if err := harness.Sleep(ctx, wait-lead); err != nil {
			return err
		}
		if err := d.driftAfresh(ctx, w, i); err != nil {
			return err
		}
		if err := harness.Sleep(ctx, lead); err != nil {
			return err
		}
		if err := w.restartController(); err != nil {
			return err
		}
		w.in.Logf("%s: killed the controller (%d of %d)", w.name, i+1, kills)
	}
	return nil
}
