package diff

import (
	"bytes"
	"encoding/json"
	"fmt"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// patchValueOp is a JSON patch operation that carries a value ("add",
// "replace"). The value is always written, even when it is null.
type patchValueOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value"`
}

// patchRemoveOp is a JSON patch "remove" operation, which has no value.
type patchRemoveOp struct {
	Op   string `json:"op"`
	Path string `json:"path"`
}

// Patch renders changes as an RFC 6902 JSON patch, the format the controller
// sends to the API server. When resourceVersion is not empty the first
// operation sets /metadata/resourceVersion to it: the API server then
// refuses the write with 409 Conflict if the object changed since it was
// read (the optimistic lock client-go's merge patches use), instead of
// overwriting that change. A JSON-patch "test" op would fail with a generic
// 422 that cannot be told from a validation error.
// Callers should not write a patch for an empty change list.
func Patch(changes []Change, resourceVersion string) ([]byte, error) {
	ops := make([]any, 0, len(changes)+1)
	if resourceVersion != "" {
		ops = append(ops, patchValueOp{Op: "replace", Path: "/metadata/resourceVersion", Value: resourceVersion})
	}
	for _, ch := range changes {
		if _, ok := splitPointer(ch.Path); !ok {
			return nil, fmt.Errorf("%w: path %q is not a JSON pointer", ErrInvalidChange, ch.Path)
		}
		switch ch.Op {
		case OpAdd, OpReplace:
			ops = append(ops, patchValueOp{Op: string(ch.Op), Path: ch.Path, Value: ch.After})
		case OpRemove:
			ops = append(ops, patchRemoveOp{Op: string(ch.Op), Path: ch.Path})
		default:
			return nil, fmt.Errorf("%w: unknown op %q at %s", ErrInvalidChange, ch.Op, ch.Path)
		}
	}
	return encodeJSON(ops)
}

// encodeJSON marshals v without HTML escaping, so URLs with "&" stay readable
// in patches, events and logs.
func encodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encoding JSON: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// Apply returns a copy of live with changes applied. It computes the object a
// correction will produce (for recreate/rotate decisions and the server
// dry-run) the same way the API server does: live is encoded to JSON, the
// patch from Patch is applied with the JSON patch library the API server uses
// (gopkg.in/evanphx/json-patch.v4), and the result is decoded with
// Kubernetes' JSON rules (integers become int64, other numbers float64).
// A nil live object is treated as empty. live is never modified.
func Apply(live *unstructured.Unstructured, changes []Change) (*unstructured.Unstructured, error) {
	obj := content(live)
	if obj == nil {
		obj = map[string]any{}
	}
	doc, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("encoding live object: %w", err)
	}
	if len(changes) > 0 {
		raw, err := Patch(changes, "")
		if err != nil {
			return nil, err
		}
		patch, err := jsonpatch.DecodePatch(raw)
		if err != nil {
			return nil, fmt.Errorf("decoding patch: %w", err)
		}
		if doc, err = patch.Apply(doc); err != nil {
			return nil, fmt.Errorf("applying patch: %w", err)
		}
	}
	out := map[string]any{}
	if err := utiljson.Unmarshal(doc, &out); err != nil {
		return nil, fmt.Errorf("decoding patched object: %w", err)
	}
	return &unstructured.Unstructured{Object: out}, nil
}
