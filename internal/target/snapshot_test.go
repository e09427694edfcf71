package target

import (
	"context"
	"errors"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// countingReader counts the reads that reach it, and fails them with err
// while err is set.
type countingReader struct {
	client.Reader
	gets, lists int
	err         error
}

func (c *countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	c.gets++
	if c.err != nil {
		return c.err
	}
	return c.Reader.Get(ctx, key, obj, opts...)
}

func (c *countingReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	c.lists++
	if c.err != nil {
		return c.err
	}
	return c.Reader.List(ctx, list, opts...)
}

func cm(name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("ConfigMap")
	u.SetNamespace("ns")
	u.SetName(name)
	return u
}

func TestSnapshot(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	live := cm("a")
	_ = unstructured.SetNestedField(live.Object, "1", "data", "k")
	r := &countingReader{Reader: fake.NewClientBuilder().WithObjects(live).Build()}
	s := NewSnapshot(r)

	got := cm("a")
	g.Expect(s.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "a"}, got)).To(Succeed())
	got.Object["data"] = map[string]any{"k": "changed by the caller"}
	again := cm("a")
	g.Expect(s.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "a"}, again)).To(Succeed())
	v, _, _ := unstructured.NestedString(again.Object, "data", "k")
	g.Expect(v).To(Equal("1"), "each read gets its own copy")
	g.Expect(r.gets).To(Equal(1), "the server is asked once")

	g.Expect(apierrors.IsNotFound(s.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "gone"}, cm("gone")))).To(BeTrue())
	g.Expect(apierrors.IsNotFound(s.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "gone"}, cm("gone")))).To(BeTrue())
	g.Expect(r.gets).To(Equal(2), "not found is part of the snapshot")

	list := func(ns string) *unstructured.UnstructuredList {
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMapList"})
		g.Expect(s.List(ctx, l, client.InNamespace(ns))).To(Succeed())
		return l
	}
	g.Expect(list("ns").Items).To(HaveLen(1))
	l := list("ns")
	l.Items[0].SetName("renamed by the caller")
	g.Expect(list("ns").Items[0].GetName()).To(Equal("a"))
	g.Expect(list("other").Items).To(BeEmpty())
	g.Expect(r.lists).To(Equal(2), "one list per namespace")

	typed := &corev1.ConfigMap{}
	g.Expect(s.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "a"}, typed)).To(Succeed())
	g.Expect(s.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "a"}, typed)).To(Succeed())
	g.Expect(r.gets).To(Equal(4), "typed objects are read every time")

	r.err = apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "b", errors.New("no"))
	g.Expect(s.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "b"}, cm("b"))).To(MatchError(ContainSubstring("forbidden")))
	r.err = nil
	g.Expect(s.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "b"}, cm("b"))).To(WithTransform(apierrors.IsNotFound, BeTrue()),
		"an error is not kept: the next read asks again")
}
