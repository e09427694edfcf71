package apply

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// prune deletes an unused replacement plan.DecidePrune picked, with the
// UID and resourceVersion it was read at as preconditions, so an object
// changed or recreated since the pass read it is not deleted, and a crash
// between the checks and the delete leaves it for the next pass to check
// again. It does not wait: DecidePrune only picks deletes that complete at
// once. One already gone counts as done.
func (w *writer) prune(ctx context.Context, o *unstructured.Unstructured) error {
	uid, rv := o.GetUID(), o.GetResourceVersion()
	err := w.c.Delete(ctx, o.DeepCopy(), client.Preconditions{UID: &uid, ResourceVersion: &rv})
	if err != nil && !apierrors.IsNotFound(err) {
		return asConflict(fmt.Errorf("failed to delete unused replacement %s %s/%s: %w", o.GetKind(), o.GetNamespace(), o.GetName(), err))
	}
	return nil
}
