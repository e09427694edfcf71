package apply

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/plan"
)

// unblockTimeout bounds lifting the move blocks when a pass ends: it runs
// even when the pass's context is done (a shutdown, a timeout), since a
// move block left behind holds `clusterctl move` until the next pass.
const unblockTimeout = 10 * time.Second

// BlockMove sets the move block on each Cluster of block
// (plan.DecideMoveBlock) before the pass's first write. Each Cluster is
// read live and patched at the resourceVersion of that read, so the block
// lands only on the Cluster as read. If that read finds it paused
// (clusterctl pauses the Clusters before it waits for the move blocks, and
// then copies), gone or replaced, the pass stops with ErrConflict before
// any write, and its next run waits at the pause gate.
func BlockMove(ctx context.Context, c client.Client, block []*unstructured.Unstructured) error {
	w := &writer{c: c}
	for _, cl := range block {
		fresh, err := Get(ctx, c, cl.GroupVersionKind(), cl.GetNamespace(), cl.GetName())
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
		log.FromContext(ctx).V(1).Info("Blocking clusterctl move for the writes of this pass", "cluster", cl.GetNamespace()+"/"+cl.GetName())
		if err := w.patch(ctx, fresh, plan.BlockMoveChanges(fresh)); err != nil {
			return err
		}
	}
	return nil
}

// UnblockMove lifts the add-on's move block from each Cluster of unblock,
// when a pass ends, whether its writes succeeded or not. Each lift reads
// the Cluster live and patches it at that read's resourceVersion, and only
// when the annotation is still the add-on's; a conflict (a Cluster API
// controller wrote the Cluster's status in between) reads again. It runs
// on ctx without its cancellation, so a pass cut short still lifts its
// move blocks; what it cannot lift, the next pass does.
func UnblockMove(ctx context.Context, c client.Client, unblock []*unstructured.Unstructured) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), unblockTimeout)
	defer cancel()
	w := &writer{c: c}
	var errs []error
	for _, cl := range unblock {
		err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
			fresh, err := Get(ctx, c, cl.GroupVersionKind(), cl.GetNamespace(), cl.GetName())
			if err != nil || fresh == nil || fresh.GetAnnotations()[api.BlockMoveAnnotation] != api.ControllerName {
				return err
			}
			// The API server's 409 stays in the chain, for RetryOnConflict.
			return w.patch(ctx, fresh, plan.UnblockMoveChanges())
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("failed to lift the move block from Cluster %s/%s: %w", cl.GetNamespace(), cl.GetName(), err))
		}
	}
	return errors.Join(errs...)
}
