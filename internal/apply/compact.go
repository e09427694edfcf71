package apply

import (
	"encoding/json"
	"fmt"
	"maps"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/templatedrift/template-drift-controller/api"
)

// compactField is the field of a compact object that holds, as one JSON
// string, everything Compact does not keep decoded.
const compactField = "compact.templatedrift.io/content"

// decodedMetadata are the metadata fields a compact object keeps decoded:
// the informer's key (namespace and name) and the version an update
// changes. decodedAnnotations are the annotations it keeps decoded: Helm's
// ownership, with which the watches' handler maps a change to its
// HelmRelease without expanding the object.
var (
	decodedMetadata    = []string{"name", "namespace", "resourceVersion"}
	decodedAnnotations = []string{api.HelmReleaseNameAnnotation, api.HelmReleaseNamespaceAnnotation}
)

// Compact returns u as the read cache keeps it: its apiVersion, kind,
// name, namespace, resourceVersion and Helm's ownership annotations
// decoded, and the rest (the other metadata, spec, status) as one JSON
// string. It is still an *unstructured.Unstructured, so the informer, its
// deep copies and the watches' handler (which read only what is decoded)
// treat it as any object; Expand gives a pass the whole object back.
//
// It was chosen because a decoded object costs several times its JSON (a
// map and an interface for every field, metadata included: labels,
// annotations, owners), the read cache holds tens of thousands of objects
// at thousands of releases, and a pass reads a few of them: it decodes
// those. A string is shared, not copied, by an object's deep copy.
func Compact(u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if _, done := u.Object[compactField]; done {
		return u, nil
	}
	rest := make(map[string]any, len(u.Object))
	out := map[string]any{}
	for k, v := range u.Object {
		switch k {
		case "apiVersion", "kind":
			out[k] = v
		case "metadata":
			md, ok := v.(map[string]any)
			if !ok {
				rest[k] = v
				continue
			}
			kept, other := splitMetadata(md)
			out[k] = kept
			if len(other) > 0 {
				rest[k] = other
			}
		default:
			rest[k] = v
		}
	}
	b, err := json.Marshal(rest)
	if err != nil {
		return nil, fmt.Errorf("failed to compact %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	out[compactField] = string(b)
	return &unstructured.Unstructured{Object: out}, nil
}

// splitMetadata splits md into what Compact keeps decoded and the rest.
// md is not changed: the maps returned are new ones.
func splitMetadata(md map[string]any) (kept, other map[string]any) {
	kept, other = map[string]any{}, maps.Clone(md)
	for _, k := range decodedMetadata {
		if v, ok := md[k]; ok {
			kept[k] = v
			delete(other, k)
		}
	}
	ann, ok := md["annotations"].(map[string]any)
	if !ok {
		return kept, other
	}
	keptAnn, otherAnn := map[string]any{}, maps.Clone(ann)
	for _, k := range decodedAnnotations {
		if v, ok := ann[k]; ok {
			keptAnn[k] = v
			delete(otherAnn, k)
		}
	}
	if len(keptAnn) > 0 {
		kept["annotations"] = keptAnn
	}
	delete(other, "annotations")
	if len(otherAnn) > 0 || len(keptAnn) == 0 {
		other["annotations"] = otherAnn
	}
	return kept, other
}

// Expand returns a compact object (Compact) whole again, in place; any
// other object is left as it is. It changes u's metadata map, so u must
// be the caller's own copy (a read's deep copy), never the cache's.
func Expand(u *unstructured.Unstructured) error {
	s, ok := u.Object[compactField].(string)
	if !ok {
		return nil
	}
	// utiljson decodes whole numbers as int64, as the API server's
	// objects are decoded.
	rest := map[string]any{}
	if err := utiljson.Unmarshal([]byte(s), &rest); err != nil {
		return fmt.Errorf("failed to expand %s %s/%s from the read cache: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	delete(u.Object, compactField)
	other, hasOther := rest["metadata"].(map[string]any)
	delete(rest, "metadata")
	maps.Copy(u.Object, rest)
	if !hasOther {
		return nil
	}
	md, ok := u.Object["metadata"].(map[string]any)
	if !ok {
		md = map[string]any{}
		u.Object["metadata"] = md
	}
	for k, v := range other {
		if k != "annotations" {
			md[k] = v
			continue
		}
		ann, _ := v.(map[string]any)
		if kept, ok := md["annotations"].(map[string]any); ok {
			maps.Copy(kept, ann)
			continue
		}
		md["annotations"] = ann
	}
	return nil
}
