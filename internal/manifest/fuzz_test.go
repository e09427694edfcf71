package manifest

import (
	"errors"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/templatedrift/template-drift-controller/internal/diff"
)

// FuzzSplit: any manifest either splits into named, namespaced objects or
// fails with ErrManifestInvalid or ErrManifestTooLarge; it never panics.
// Prepare fails for the same manifests, and the objects of its prepared
// form are Split's, value for value.
func FuzzSplit(f *testing.F) {
	f.Add("---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n")
	f.Add("---\n# Source: x\napiVersion: infrastructure.cluster.x-k8s.io/v1beta1\nkind: Metal3MachineTemplate\nmetadata: {name: m, namespace: n}\nspec: {template: {spec: {image: {url: u}}}}\n---\n")
	f.Add("kind: [")
	f.Add("---\n---\n\n---")
	f.Add("apiVersion: a/b/c\nkind: K\nmetadata: {name: x}")
	f.Add("apiVersion: v1\nkind: K\nmetadata: {name: x}\nspec: {a: 1.0, b: 1e21, c: 0.1, d: -0, e: \"<&>\\n\", f: ~, g: [1, \"2\", yes], 3: x}")
	f.Fuzz(func(t *testing.T, manifest string) {
		objs, err := Split(manifest, "ns", 1<<16)
		prepared, prepErr := Prepare(manifest, "ns", 1<<16)
		if (err == nil) != (prepErr == nil) {
			t.Fatalf("Split and Prepare disagree: %v, %v", err, prepErr)
		}
		if err != nil {
			if !errors.Is(err, ErrManifestInvalid) && !errors.Is(err, ErrManifestTooLarge) {
				t.Fatalf("unexpected error class: %v", err)
			}
			return
		}
		again, err := prepared.Objects()
		if err != nil {
			t.Fatalf("prepared form does not decode: %v", err)
		}
		if !reflect.DeepEqual(again, objs) {
			t.Fatalf("prepared objects differ:\n%v\n%v", again, objs)
		}
		for _, o := range objs {
			if o.GetName() == "" || o.GetNamespace() == "" || o.GetKind() == "" {
				t.Fatalf("incomplete object %v", o.Object)
			}
		}
	})
}

// FuzzRepoint: rewriting references in an arbitrary consumer never panics,
// changes only name fields that held the old name, and is idempotent.
func FuzzRepoint(f *testing.F) {
	f.Add(`{"apiVersion":"cluster.x-k8s.io/v1beta2","kind":"MachineDeployment","metadata":{"name":"md","namespace":"ns"},"spec":{"template":{"spec":{"infrastructureRef":{"apiGroup":"infrastructure.cluster.x-k8s.io","kind":"Metal3MachineTemplate","name":"cp"}}}}}`, "cp", "cp-x")
	f.Add(`{"apiVersion":"controlplane.cluster.x-k8s.io/v1beta1","kind":"RKE2ControlPlane","metadata":{"name":"r","namespace":"ns"},"spec":{"infrastructureRef":{"apiVersion":"infrastructure.cluster.x-k8s.io/v1beta1","kind":"Metal3MachineTemplate","name":"cp","namespace":"other"}}}`, "cp", "y")
	f.Add(`{"apiVersion":"infrastructure.cluster.x-k8s.io/v1beta1","kind":"Metal3MachineTemplate","metadata":{"name":"w","namespace":"ns"},"spec":{"template":{"spec":{"dataTemplate":{"name":5}}}}}`, "w", "z")
	f.Fuzz(func(t *testing.T, doc, from, to string) {
		o := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &o.Object); err != nil || o.Object == nil {
			return
		}
		id := ID{GroupKind: schema.GroupKind{Group: "infrastructure.cluster.x-k8s.io", Kind: "Metal3MachineTemplate"}, Namespace: o.GetNamespace(), Name: from}
		changes, err := Repoint(o, id, to)
		if err != nil {
			if !errors.Is(err, ErrCrossNamespaceRef) {
				t.Fatalf("unexpected error: %v", err)
			}
			return
		}
		for _, c := range changes {
			if c.Before != from || c.After != to || c.Op != diff.OpReplace {
				t.Fatalf("unexpected change %+v", c)
			}
		}
		if len(changes) == 0 {
			return
		}
		patched, err := diff.Apply(o, changes)
		if err != nil {
			t.Fatalf("apply: %v", err)
		}
		again, err := Repoint(patched, id, to)
		if err != nil || len(again) != 0 {
			t.Fatalf("not idempotent: %v %v", again, err)
		}
	})
}
