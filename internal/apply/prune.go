package apply

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/templatedrift/template-drift-controller/internal/manifest"
)

// Prune deletes the unused replacements plan.DecidePrune picked, each with
// the UID and resourceVersion it was read at as preconditions, so an object
// changed or recreated since the pass read it is not deleted, and a crash
// between the checks and the delete leaves it for the next pass to check
// again. It does not wait:
// DecidePrune only picks deletes that complete at once. It returns the
// replacements deleted; one already gone counts as done.
func Prune(ctx context.Context, c client.Client, objs []*unstructured.Unstructured) ([]manifest.ID, error) {
	var done []manifest.ID
	for _, o := range objs {
		log.FromContext(ctx).Info("Deleting unused replacement", "template", klog.KObj(o), "kind", o.GetKind())
		uid, rv := o.GetUID(), o.GetResourceVersion()
		err := c.Delete(ctx, o.DeepCopy(), client.Preconditions{UID: &uid, ResourceVersion: &rv})
		if err != nil && !apierrors.IsNotFound(err) {
			return done, asConflict(fmt.Errorf("failed to delete unused replacement %s %s/%s: %w", o.GetKind(), o.GetNamespace(), o.GetName(), err))
		}
		done = append(done, manifest.IDOf(o))
	}
	return done, nil
}
