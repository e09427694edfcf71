package target

import (
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/packed"
)

// compactField is the field of a compact object that holds, as one JSON
// string compressed with its length (packed.DeflateSized), everything Compact does not keep
// decoded; ownerField holds its Helm release as "namespace/name", from
// Helm's ownership annotations.
const (
	compactField = "compact.templatedrift.io/content"
	ownerField   = "compact.templatedrift.io/helm-release"
)

// decodedMetadata are the metadata fields a compact object keeps decoded:
// the informer's key (namespace and name) and the version an update
// changes.
var decodedMetadata = []string{"name", "namespace", "resourceVersion"}

// Compact returns u as the read cache keeps it: its apiVersion, kind,
// name, namespace and resourceVersion decoded, its Helm release (from
// Helm's ownership annotations) as one string, and the rest (the other
// metadata, spec, status) as one JSON string, compressed. It is still an
// *unstructured.Unstructured, so the informer, its deep copies and the
// watches' handler (which reads HelmOwner) treat it as any object; Expand
// gives a pass the whole object back.
//
// It was chosen because a decoded object costs several times its JSON (a
// map and an interface for every field, metadata included: labels,
// annotations, owners), the read cache holds tens of thousands of objects
// at thousands of releases, and a pass reads a few of them: it decodes
// those. A string is shared, not copied, by an object's deep copy. The
// JSON is compressed because it is most of what stays, and a read
// inflates only the few objects it reads (docs/benchmarks.md).
func Compact(u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if _, done := u.Object[compactField]; done {
		return u, nil
	}
	rest := make(map[string]any, len(u.Object))
	out := make(map[string]any, 5)
	for k, v := range u.Object {
		switch k {
		case "apiVersion", "kind":
			out[k] = intern(v)
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
	if name, ns := helmOwner(u.GetAnnotations()); name != "" && ns != "" {
		out[ownerField] = ns + "/" + name
	}
	b, err := json.Marshal(rest)
	if err != nil {
		return nil, fmt.Errorf("failed to compact %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	packedRest, err := packed.DeflateSized(string(b))
	if err != nil {
		return nil, fmt.Errorf("failed to compact %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	out[compactField] = packedRest
	return &unstructured.Unstructured{Object: out}, nil
}

// HelmOwner returns the name and namespace of the Helm release that owns o,
// from Helm's ownership annotations, or from a compact object's owner
// field, whose annotations are not decoded; "" when o has none.
func HelmOwner(o client.Object) (name, namespace string) {
	if u, ok := o.(*unstructured.Unstructured); ok {
		if _, compact := u.Object[compactField]; compact {
			owner, _ := u.Object[ownerField].(string)
			namespace, name, _ = strings.Cut(owner, "/")
			return name, namespace
		}
	}
	return helmOwner(o.GetAnnotations())
}

func helmOwner(ann map[string]string) (name, namespace string) {
	return ann[api.HelmReleaseNameAnnotation], ann[api.HelmReleaseNamespaceAnnotation]
}

// splitMetadata splits md into what Compact keeps decoded and the rest.
// md is not changed: the maps returned are new ones.
func splitMetadata(md map[string]any) (kept, other map[string]any) {
	kept, other = make(map[string]any, len(decodedMetadata)), maps.Clone(md)
	for _, k := range decodedMetadata {
		if v, ok := md[k]; ok {
			kept[k] = v
			delete(other, k)
		}
	}
	return kept, other
}

// interned are the apiVersions and kinds of compact objects: thousands of
// objects share a few of each, where decoding gave each its own copy.
var interned sync.Map

func intern(v any) any {
	s, ok := v.(string)
	if !ok {
		return v
	}
	got, _ := interned.LoadOrStore(s, s)
	return got
}

// Expand returns a compact object (Compact) whole again, in place; any
// other object is left as it is. It changes u's metadata map, so u must
// be the caller's own copy (a read's deep copy), never the cache's.
func Expand(u *unstructured.Unstructured) error {
	p, ok := u.Object[compactField].(string)
	if !ok {
		return nil
	}
	b, err := packed.InflateSized(p)
	if err != nil {
		return fmt.Errorf("failed to expand %s %s/%s from the read cache: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	// utiljson decodes whole numbers as int64, as the API server's
	// objects are decoded.
	rest := map[string]any{}
	if err := utiljson.Unmarshal(b, &rest); err != nil {
		return fmt.Errorf("failed to expand %s %s/%s from the read cache: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	delete(u.Object, compactField)
	delete(u.Object, ownerField)
	other, hasOther := rest["metadata"].(map[string]any)
	delete(rest, "metadata")
	maps.Copy(u.Object, rest)
	if !hasOther {
		return nil
	}
	md, ok := u.Object["metadata"].(map[string]any)
	if !ok {
		md = make(map[string]any, len(other))
		u.Object["metadata"] = md
	}
	maps.Copy(md, other)
	return nil
}
