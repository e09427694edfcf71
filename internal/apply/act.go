package apply

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/templatedrift/template-drift-controller/internal/diff"
	"github.com/templatedrift/template-drift-controller/internal/plan"
)

// Run makes the steps plan.Script decided, in the order given, and stops
// at the first that fails. It decides nothing: each step carries its
// object, its changes and its precondition. It returns what it made.
func Run(ctx context.Context, c client.Client, steps []plan.Step, deleteWait time.Duration) plan.Progress {
	w := &writer{c: c, deleteWait: deleteWait}
	var p plan.Progress
	for _, s := range steps {
		logger := log.FromContext(ctx).WithValues("kind", s.ID.Kind, "object", klog.KRef(s.ID.Namespace, s.ID.Name))
		if len(s.Changes) > 0 && s.Op == plan.OpPatch {
			logger = logger.WithValues("diff", diff.Summary(s.Changes, 80, 10))
		}
		switch {
		case s.Op == plan.OpBlockMove || s.Op == plan.OpUnblockMove:
			logger.V(1).Info(s.Log)
		case s.Log != "":
			logger.Info(s.Log)
		}
		before := w.writes
		if err := w.step(ctx, s); err != nil {
			p.Writes, p.Err = p.Writes+w.writes-before, err
			return p
		}
		switch s.Op {
		case plan.OpPrune:
			p.Pruned = append(p.Pruned, s.ID)
		case plan.OpBlockMove, plan.OpUnblockMove, plan.OpConfirmUnused:
		default:
			p.Writes += w.writes - before
		}
	}
	return p
}

// step makes one step.
func (w *writer) step(ctx context.Context, s plan.Step) error {
	switch s.Op {
	case plan.OpStop:
		return errors.New(s.Message)
	case plan.OpPatch:
		return w.patch(ctx, s.Live, s.Changes)
	case plan.OpCreate:
		return w.create(ctx, s.Object)
	case plan.OpRecreate:
		if err := w.validateCreate(ctx, s.Object); err != nil {
			return err
		}
		if err := w.deleteExact(ctx, s.Live); err != nil {
			return err
		}
		return w.create(ctx, s.Object)
	case plan.OpPrune:
		return w.prune(ctx, s.Live)
	case plan.OpConfirmUnused:
		return w.confirmUnused(ctx, s.ID, s.Users)
	case plan.OpBlockMove:
		return w.blockMove(ctx, s.Live)
	case plan.OpUnblockMove:
		return w.unblockMove(ctx, s.Live)
	}
	return fmt.Errorf("unknown step %q", s.Op)
}
