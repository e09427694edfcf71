package apply

import (
	"github.com/templatedrift/template-drift-controller/internal/plan"

	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/diff"
)

var fieldOwner = client.FieldOwner(api.ControllerName)

// ErrConflict means the world changed under a write; the controller starts
// the pass over from a fresh read, with back-off.
var ErrConflict = errors.New("object changed during correction")

// ErrWaitingForDeletion means a recreate deleted a template whose
// finalizers keep it; the next pass creates it once it is gone.
var ErrWaitingForDeletion = errors.New("waiting for the template to be deleted")

// writer performs the writes of a pass and counts them.
type writer struct {
	c      client.Client
	writes int
	// deleteWait bounds how long a recreate waits for its delete to finish.
	deleteWait time.Duration
}

// patch applies changes to live with a JSON patch that carries live's
// resourceVersion, so it is refused if anything else wrote in between.
func (w *writer) patch(ctx context.Context, live *unstructured.Unstructured, changes []diff.Change) error {
	patch, err := diff.Patch(changes, live.GetResourceVersion())
	if err != nil {
		return err
	}
	obj := live.DeepCopy()
	if err := w.c.Patch(ctx, obj, client.RawPatch(types.JSONPatchType, patch), fieldOwner); err != nil {
		return asConflict(fmt.Errorf("failed to patch %s %s/%s: %w", live.GetKind(), live.GetNamespace(), live.GetName(), err))
	}
	w.writes++
	return nil
}

// create creates obj. The caller checked it was absent, so an object of
// that name appearing in between is a race: ErrConflict, and the next pass
// looks again.
func (w *writer) create(ctx context.Context, obj *unstructured.Unstructured) error {
	err := w.c.Create(ctx, obj, fieldOwner)
	if apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("%w: %s %s/%s was created concurrently", ErrConflict, obj.GetKind(), obj.GetNamespace(), obj.GetName())
	}
	if err != nil {
		return fmt.Errorf("failed to create %s %s/%s: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
	}
	w.writes++
	return nil
}

// validateCreate asks the server, with dryRun=All, whether it would accept
// obj as a new object: schema, CEL rules and admission webhooks all run.
// A recreate calls it before deleting, so a manifest the server refuses
// never costs the live template.
func (w *writer) validateCreate(ctx context.Context, obj *unstructured.Unstructured) error {
	_, err := dryRunCreate(ctx, w.c, obj)
	switch {
	case err == nil:
		return nil
	case plan.IsRefusal(err):
		return fmt.Errorf("failed to recreate %s %s/%s: the server refuses the manifest's object: %w",
			obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
	default:
		// No answer about the object (a 500, a timeout): nothing deleted,
		// and nothing to say about the manifest.
		return fmt.Errorf("failed to recreate %s %s/%s: the server did not answer the dry-run of the manifest's object: %w",
			obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
	}
}

// deleteExact deletes live only if it is still the same object at the same
// resourceVersion, then waits briefly for it to be gone.
func (w *writer) deleteExact(ctx context.Context, live *unstructured.Unstructured) error {
	uid, rv := live.GetUID(), live.GetResourceVersion()
	pre := client.Preconditions{UID: &uid, ResourceVersion: &rv}
	if err := w.c.Delete(ctx, live.DeepCopy(), pre); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return asConflict(fmt.Errorf("failed to delete %s %s/%s: %w", live.GetKind(), live.GetNamespace(), live.GetName(), err))
	}
	w.writes++
	probe := &unstructured.Unstructured{}
	probe.SetGroupVersionKind(live.GroupVersionKind())
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, w.deleteWait, true, func(ctx context.Context) (bool, error) {
		err := w.c.Get(ctx, client.ObjectKeyFromObject(live), probe)
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, client.IgnoreNotFound(err)
	})
	if err != nil {
		return fmt.Errorf("%w: %s %s/%s", ErrWaitingForDeletion, live.GetKind(), live.GetNamespace(), live.GetName())
	}
	return nil
}

// asConflict marks the API server's optimistic-lock refusals (409 Conflict,
// which a stale resourceVersion or a failed delete precondition gives) as
// ErrConflict.
func asConflict(err error) error {
	if apierrors.IsConflict(err) {
		return fmt.Errorf("%w: %w", ErrConflict, err)
	}
	return err
}
