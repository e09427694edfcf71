package target

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/templatedrift/template-drift-controller/internal/manifest"
)

// slimMetadata are the metadata fields a slimmed object keeps: its
// identity and version (a write's precondition), the annotations (Helm's
// ownership, Cluster API's pause, clusterctl's block-move), the labels,
// the owners and the deletion state.
var slimMetadata = []string{"name", "namespace", "uid", "resourceVersion", "generation", "creationTimestamp",
	"labels", "annotations", "ownerReferences", "finalizers", "deletionTimestamp", "deletionGracePeriodSeconds"}

// SlimTransform returns the transform of the informers a pass reads from.
// It drops every object's managedFields, and keeps of the objects whose
// content a pass reads only in part (Clusters, consumers and holders:
// manifest.ReadPaths) their apiVersion, kind, metadata (slimMetadata) and
// the spec paths it reads; templates (isTemplate, and every kind with no
// ReadPaths) are kept whole, because a pass diffs them. Every object is then
// kept compact (Compact): only its name, namespace and version decoded, its
// Helm release as one string, the rest as one JSON string a read expands.
//
// It was chosen over typed or metadata-only informers because passes read
// these kinds at whatever version each release uses, as unstructured
// objects, and a slim unstructured object is read the same way. What it
// saves is the consumers' and Clusters' specs (a KubeadmControlPlane's
// kubeadmConfigSpec is the larger part of a release's objects) and every
// status, which Cluster API's controllers rewrite on every change. A pass
// that reads an object live (a confirmation, a remote cluster) reads it
// whole; only what ReadPaths names may be read from a slimmed one.
func SlimTransform(isTemplate func(schema.GroupKind) bool) toolscache.TransformFunc {
	return func(in any) (any, error) {
		if o, ok := in.(metav1.Object); ok {
			o.SetManagedFields(nil)
		}
		u, ok := in.(*unstructured.Unstructured)
		if !ok {
			return in, nil
		}
		if _, done := u.Object[compactField]; done {
			return u, nil
		}
		gk := u.GroupVersionKind().GroupKind()
		if paths, ok := manifest.ReadPaths(gk); ok && !isTemplate(gk) {
			u = Slim(u, paths)
		}
		return Compact(u)
	}
}

// Slim returns u with only its apiVersion, kind, slimMetadata and the
// spec paths given; applied to its own result, it returns the same.
func Slim(u *unstructured.Unstructured, paths [][]string) *unstructured.Unstructured {
	out := map[string]any{"apiVersion": u.Object["apiVersion"], "kind": u.Object["kind"]}
	if md, ok := u.Object["metadata"].(map[string]any); ok {
		kept := make(map[string]any, len(slimMetadata))
		for _, k := range slimMetadata {
			if v, ok := md[k]; ok {
				kept[k] = v
			}
		}
		out["metadata"] = kept
	}
	for _, p := range paths {
		v, found, err := unstructured.NestedFieldNoCopy(u.Object, p...)
		if err != nil || !found {
			continue
		}
		// The value is moved, not copied: the informer owns u, and drops
		// it once transformed.
		setNoCopy(out, v, p)
	}
	return &unstructured.Unstructured{Object: out}
}

// setNoCopy sets m's field at path to v, making the maps on the way.
func setNoCopy(m map[string]any, v any, path []string) {
	for _, k := range path[:len(path)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	m[path[len(path)-1]] = v
}
