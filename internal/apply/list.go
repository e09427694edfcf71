package apply

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// unservedMarker is a mapper that can be told a kind is gone (ServedKinds).
type unservedMarker interface {
	MarkUnserved(gk schema.GroupKind)
}

// ListKind lists the objects of kind gk in namespace, in the version the
// server prefers. A kind the server does not serve lists nothing: a
// cluster without MachinePools, or without RKE2, has no such users. The
// mapper (ServedKinds) answers that from memory after the first time. A
// kind whose CustomResourceDefinition went after the mapper learnt of it
// is answered 404 by the server: it lists nothing too, and the mapper is
// told, so the next pass does not ask the server again.
func ListKind(ctx context.Context, c client.Reader, mapper apimeta.RESTMapper, gk schema.GroupKind, namespace string) ([]*unstructured.Unstructured, error) {
	mapping, err := mapper.RESTMapping(gk)
	if apimeta.IsNoMatchError(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("failed to find the served version of %s: %w", gk, err)
	}
	objs, err := List(ctx, c, mapping.GroupVersionKind, namespace)
	if apierrors.IsNotFound(err) {
		if m, ok := mapper.(unservedMarker); ok {
			m.MarkUnserved(gk)
		}
		return nil, nil
	}
	return objs, err
}

// List lists the objects of gvk in namespace. Its errors wrap the API
// server's: a 404 means the server does not serve gvk.
func List(ctx context.Context, c client.Reader, gvk schema.GroupVersionKind, namespace string) ([]*unstructured.Unstructured, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err := c.List(ctx, list, client.InNamespace(namespace)); err != nil {
		if apimeta.IsNoMatchError(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("failed to list %s in namespace %s: %w", gvk.Kind, namespace, err)
	}
	out := make([]*unstructured.Unstructured, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, &list.Items[i])
	}
	return out, nil
}
