package target

import (
	"context"
	"fmt"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// unservedMarker is a mapper that can be told a kind is gone (ServedKinds).
type unservedMarker interface {
	MarkUnserved(gk schema.GroupKind)
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
