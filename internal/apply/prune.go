package apply

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/plan"
	"github.com/templatedrift/template-drift-controller/internal/target"
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

// confirmUnused lists, live in id's namespace, the objects of every kind
// in users that the server serves, and fails with ErrConflict when one of
// them uses id (plan.IndexUsers, the rule the pass decided with): a user
// appeared since the pass read the world, and the pass runs again from a
// fresh read.
func (w *writer) confirmUnused(ctx context.Context, id manifest.ID, users []schema.GroupKind) error {
	kinds := make([]schema.GroupVersionKind, 0, len(users))
	for _, gk := range users {
		kinds = append(kinds, gk.WithVersion(""))
	}
	objs, err := target.ListServed(ctx, w.c, w.c.RESTMapper(), id.Namespace, kinds)
	if err != nil {
		return fmt.Errorf("failed to confirm %s %s/%s is unused: %w", id.Kind, id.Namespace, id.Name, err)
	}
	if users := plan.IndexUsers(objs, nil)[id]; len(users) > 0 {
		return fmt.Errorf("%w: %s %s/%s is used by %s %s since the pass read it", ErrConflict,
			id.Kind, id.Namespace, id.Name, users[0].ID.Kind, users[0].ID.Name)
	}
	return nil
}
