package apply

import (
	"encoding/json"
	"fmt"
	"maps"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// compactField is the field of a compact object that holds, as one JSON
// string, everything but its apiVersion, kind and metadata.
const compactField = "compact.templatedrift.io/content"

// Compact returns u as the read cache keeps a template: its apiVersion,
// kind and metadata as they are, and the rest (spec, status) as one JSON
// string. It is still an *unstructured.Unstructured, so the informer, its
// deep copies and the watches' handlers (which read the metadata) treat it
// as any object; Expand gives a pass the whole object back.
//
// It was chosen because a decoded object costs several times its JSON (a
// map and an interface for every field), templates are the larger part of
// what the informers hold, and a pass reads a few of them: it decodes
// those, where the informers held every template decoded. A string is
// shared, not copied, by an object's deep copy.
func Compact(u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if _, done := u.Object[compactField]; done {
		return u, nil
	}
	rest := make(map[string]any, len(u.Object))
	out := map[string]any{}
	for k, v := range u.Object {
		switch k {
		case "apiVersion", "kind", "metadata":
			out[k] = v
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

// Expand returns a compact object (Compact) whole again, in place; any
// other object is left as it is.
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
	maps.Copy(u.Object, rest)
	return nil
}
