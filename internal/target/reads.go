package target

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Get reads the live object of kind gvk called namespace/name, or nil when
// it does not exist.
func Get(ctx context.Context, c client.Reader, gvk schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, error) {
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(gvk)
	err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, live)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("failed to get %s %s/%s: %w", gvk.Kind, namespace, name, err)
	}
	return live, nil
}

// CurrentOwners returns live's ownerReferences with each owner's current
// UID, dropping owners that no longer exist: a replacement (or a recreate)
// whose only owner is gone would be garbage collected.
func CurrentOwners(ctx context.Context, c client.Reader, live *unstructured.Unstructured) ([]metav1.OwnerReference, error) {
	var out []metav1.OwnerReference
	for _, ref := range live.GetOwnerReferences() {
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		if err != nil {
			continue
		}
		owner := &metav1.PartialObjectMetadata{}
		owner.SetGroupVersionKind(gv.WithKind(ref.Kind))
		err = c.Get(ctx, client.ObjectKey{Namespace: live.GetNamespace(), Name: ref.Name}, owner)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("failed to get owner %s %s of %s: %w", ref.Kind, ref.Name, live.GetName(), err)
		}
		ref.UID = owner.GetUID()
		out = append(out, ref)
	}
	return out, nil
}
