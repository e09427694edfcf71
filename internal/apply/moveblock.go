package apply

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/plan"
	"github.com/templatedrift/template-drift-controller/internal/target"
)

// unblockTimeout bounds lifting a move block when a pass ends: it runs
// even when the pass's context is done (a shutdown, a timeout), since a
// move block left behind holds `clusterctl move` until the next pass.
const unblockTimeout = 10 * time.Second

// blockMove sets the move block on a Cluster before the pass's first
// write. The Cluster is read live and patched at the resourceVersion of
// that read, so the block lands only on the Cluster as read. If that read
// finds it paused (clusterctl pauses the Clusters before it waits for the
// move blocks, and then copies), gone or replaced, the pass stops with
// ErrConflict before any write, and its next run waits at the pause gate.
func (w *writer) blockMove(ctx context.Context, cl *unstructured.Unstructured) error {
	fresh, err := target.Get(ctx, w.c, cl.GroupVersionKind(), cl.GetNamespace(), cl.GetName())
	if err != nil {
		return fmt.Errorf("failed to read Cluster %s/%s before blocking moves: %w", cl.GetNamespace(), cl.GetName(), err)
	}
	switch {
	case fresh == nil || fresh.GetUID() != cl.GetUID():
		return fmt.Errorf("%w: Cluster %s/%s was deleted or replaced", ErrConflict, cl.GetNamespace(), cl.GetName())
	case plan.ClusterPaused(fresh):
		return fmt.Errorf("%w: Cluster %s/%s was paused before the pass could block moves (clusterctl move may be under way)",
			ErrConflict, cl.GetNamespace(), cl.GetName())
	}
	return w.patch(ctx, fresh, plan.BlockMoveChanges(fresh))
}

// unblockMove lifts the add-on's move block from a Cluster. It reads the
// Cluster live and patches it at that read's resourceVersion, and only
// when the annotation is still the add-on's; a conflict (a Cluster API
// controller wrote the Cluster's status in between) reads again. It runs
// on ctx without its cancellation, so a pass cut short still lifts its
// move blocks; what it cannot lift, the next pass does.
func (w *writer) unblockMove(ctx context.Context, cl *unstructured.Unstructured) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), unblockTimeout)
	defer cancel()
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		fresh, err := target.Get(ctx, w.c, cl.GroupVersionKind(), cl.GetNamespace(), cl.GetName())
		if err != nil || fresh == nil || fresh.GetAnnotations()[api.BlockMoveAnnotation] != api.ControllerName {
			return err
		}
		// The API server's 409 stays in the chain, for RetryOnConflict.
		return w.patch(ctx, fresh, plan.UnblockMoveChanges())
	})
	if err != nil {
		return fmt.Errorf("failed to lift the move block from Cluster %s/%s: %w", cl.GetNamespace(), cl.GetName(), err)
	}
	return nil
}
