package target

import (
	"context"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// noticingReader tells notice the kind and version of every object a pass
// reads as unstructured, before it reads it. The controller watches a kind
// at the version passes read it at, from the same informer the reads come
// from, so it learns the versions from the reads: they are the manifests'
// versions, which are known only once releases are read.
type noticingReader struct {
	client.Reader
	notice func(schema.GroupVersionKind)
}

// Get implements client.Reader.
func (r noticingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	r.tell(obj)
	return r.Reader.Get(ctx, key, obj, opts...)
}

// List implements client.Reader.
func (r noticingReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	r.tell(list)
	return r.Reader.List(ctx, list, opts...)
}

func (r noticingReader) tell(obj runtime.Object) {
	switch obj.(type) {
	case *unstructured.Unstructured, *unstructured.UnstructuredList:
	default:
		return
	}
	gvk := obj.GetObjectKind().GroupVersionKind()
	gvk.Kind = strings.TrimSuffix(gvk.Kind, "List")
	r.notice(gvk)
}
