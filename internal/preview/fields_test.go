package preview

import (
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func obj(kind string, fields map[string]any) *unstructured.Unstructured {
	o := map[string]any{"apiVersion": "v1", "kind": kind, "metadata": map[string]any{"name": "x", "resourceVersion": "1"}}
	for k, v := range fields {
		o[k] = v
	}
	return &unstructured.Unstructured{Object: o}
}

func TestFieldChanges(t *testing.T) {
	for _, tc := range []struct {
		name        string
		live, after *unstructured.Unstructured
		want        []FieldChange
		more        int
	}{
		{name: "a created object has none", after: obj("ConfigMap", nil)},
		{name: "spec and data, not metadata",
			live:  obj("ConfigMap", map[string]any{"data": map[string]any{"a": "1", "gone": "x"}}),
			after: obj("ConfigMap", map[string]any{"data": map[string]any{"a": "2", "b": "3"}, "metadata": map[string]any{"name": "x", "resourceVersion": "2"}}),
			want: []FieldChange{{Path: "/data/a", Op: "replace", Before: "1", After: "2"}, {Path: "/data/b", Op: "add", After: "3"},
				{Path: "/data/gone", Op: "remove", Before: "x"}}},
		{name: "a Secret's values are hidden",
			live:  obj("Secret", map[string]any{"data": map[string]any{"token": "b2xk", "gone": "eA=="}}),
			after: obj("Secret", map[string]any{"data": map[string]any{"token": "bmV3", "added": "eQ=="}}),
			want: []FieldChange{{Path: "/data/added", Op: "add", After: Hidden}, {Path: "/data/gone", Op: "remove", Before: Hidden},
				{Path: "/data/token", Op: "replace", Before: Hidden, After: Hidden}}},
		{name: "the condition's limit, and how many more",
			live:  obj("ConfigMap", map[string]any{"data": map[string]any{"a": "0", "b": "0", "c": "0", "d": "0", "e": "0", "f": "0"}}),
			after: obj("ConfigMap", map[string]any{"data": map[string]any{"a": "1", "b": "1", "c": "1", "d": "1", "e": "1", "f": "1"}}),
			want: []FieldChange{{Path: "/data/a", Op: "replace", Before: "0", After: "1"}, {Path: "/data/b", Op: "replace", Before: "0", After: "1"},
				{Path: "/data/c", Op: "replace", Before: "0", After: "1"}, {Path: "/data/d", Op: "replace", Before: "0", After: "1"}},
			more: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			got, more := fieldChanges(tc.live, tc.after)
			if tc.want == nil {
				g.Expect(got).To(BeEmpty())
			} else {
				g.Expect(got).To(Equal(tc.want))
			}
			g.Expect(more).To(Equal(tc.more))
		})
	}
}

func TestFieldLines(t *testing.T) {
	g := NewWithT(t)
	long := "http://images.example/a-very-long-image-name-that-goes-on-and-on-and-on.qcow2"
	o := Object{Changes: []FieldChange{{Path: "/spec/url", Op: "replace", Before: "a", After: long}, {Path: "/spec/n", Op: "add", After: 3}}, MoreChanges: 2}
	g.Expect(fieldLines(o)).To(Equal([]string{
		`/spec/url: "a" → "http://images.example/a-very-long-image-name-that-goes-on-a…`,
		`/spec/n: <absent> → 3`,
		`(+2 more)`,
	}))
}
