package plan

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/templatedrift/template-drift-controller/api"
)

// Release identifies the stored release objects are built from.
type Release struct {
	// Name and Namespace of the Helm release (the Helm ownership annotations).
	Name, Namespace string
	// Ref is "<ns>/<name>.v<N>", recorded in api.SourceReleaseAnnotation.
	Ref string
}

// BuildReplacement returns the rotated replacement of original: the desired
// object under name, with the original's labels and annotations (Helm
// ownership included, so the release still claims it), its owners
// reattached, and the lineage annotations. It never carries the
// superseded-by annotation a previous rotation left on the original, nor
// the record (correction, corrected drift) of a correction made under the
// original's name.
func BuildReplacement(desired, original *unstructured.Unstructured, name string, owners []metav1.OwnerReference, rel Release) *unstructured.Unstructured {
	obj := fresh(desired, name, original.GetNamespace())
	obj.SetLabels(copyMap(original.GetLabels()))
	ann := copyMap(original.GetAnnotations())
	delete(ann, api.SupersededByAnnotation)
	delete(ann, api.CorrectionAnnotation)
	delete(ann, api.CorrectedDriftAnnotation)
	ann[api.ReplacesAnnotation] = original.GetName()
	ann[api.SourceReleaseAnnotation] = rel.Ref
	obj.SetAnnotations(ann)
	obj.SetOwnerReferences(owners)
	return obj
}

// BuildRecreate returns the object that replaces original under the same
// name. When original is nil (a previous pass deleted it and stopped before
// creating it again, or someone deleted it) labels and annotations come from
// the manifest plus the ownership metadata Helm itself adds, so the release
// still owns the object. digest is the plan's DriftDigest, recorded as
// api.CorrectedDriftAnnotation when it is not empty; a digest the original
// carried from an earlier correction is dropped.
func BuildRecreate(desired, original *unstructured.Unstructured, owners []metav1.OwnerReference, rel Release, digest string) *unstructured.Unstructured {
	obj := fresh(desired, desired.GetName(), desired.GetNamespace())
	var labels, ann map[string]string
	if original != nil {
		labels, ann = copyMap(original.GetLabels()), copyMap(original.GetAnnotations())
	} else {
		labels, ann = copyMap(desired.GetLabels()), copyMap(desired.GetAnnotations())
		labels[api.HelmManagedByLabel] = "Helm"
		ann[api.HelmReleaseNameAnnotation] = rel.Name
		ann[api.HelmReleaseNamespaceAnnotation] = rel.Namespace
	}
	delete(ann, api.SupersededByAnnotation)
	ann[api.SourceReleaseAnnotation] = rel.Ref
	ann[api.CorrectionAnnotation] = string(StrategyRecreate)
	delete(ann, api.CorrectedDriftAnnotation)
	if digest != "" {
		ann[api.CorrectedDriftAnnotation] = digest
	}
	obj.SetLabels(labels)
	obj.SetAnnotations(ann)
	obj.SetOwnerReferences(owners)
	return obj
}

// fresh copies desired without any server-set metadata or status.
func fresh(desired *unstructured.Unstructured, name, namespace string) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{Object: map[string]any{}}
	for k, v := range desired.DeepCopy().Object {
		if k != "metadata" && k != "status" {
			obj.Object[k] = v
		}
	}
	obj.SetName(name)
	obj.SetNamespace(namespace)
	return obj
}

func copyMap(in map[string]string) map[string]string {
	out := make(map[string]string, len(in)+3)
	for k, v := range in {
		out[k] = v
	}
	return out
}
