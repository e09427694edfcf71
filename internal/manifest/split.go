package manifest

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	releaseutil "helm.sh/helm/v4/pkg/release/v1/util"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// ErrManifestInvalid is returned when a manifest document does not parse into
// a Kubernetes object; nothing is written for such a release.
var ErrManifestInvalid = errors.New("release manifest is invalid")

// ErrManifestTooLarge is returned for a manifest above the configured limit.
var ErrManifestTooLarge = errors.New("release manifest is too large")

// DefaultMaxManifestBytes bounds the manifest the controller parses. Helm
// release Secrets are limited to 1 MiB compressed; 8 MiB of YAML is far above
// any real cluster chart and keeps a hostile release from exhausting memory.
const DefaultMaxManifestBytes = 8 << 20

// ID names one object of a release.
type ID struct {
	schema.GroupKind
	Namespace string
	Name      string
}

// String renders Kind/namespace/name for messages.
func (id ID) String() string { return id.Kind + "/" + id.Namespace + "/" + id.Name }

// IDOf returns the ID of obj.
func IDOf(obj *unstructured.Unstructured) ID {
	return ID{GroupKind: obj.GroupVersionKind().GroupKind(), Namespace: obj.GetNamespace(), Name: obj.GetName()}
}

// Split cuts manifest into objects the way Helm does, defaulting each
// object's namespace to releaseNamespace. Empty documents are dropped. The
// result is ordered by kind then namespace/name, so every pass sees the same
// order.
func Split(manifest, releaseNamespace string, maxBytes int) ([]*unstructured.Unstructured, error) {
	if err := CheckSize(len(manifest), maxBytes); err != nil {
		return nil, err
	}
	docs := releaseutil.SplitManifests(manifest)
	keys := make([]string, 0, len(docs))
	for k := range docs {
		keys = append(keys, k)
	}
	sort.Sort(releaseutil.BySplitManifestsOrder(keys))
	var out []*unstructured.Unstructured
	for i, k := range keys {
		obj, err := parseDocument(docs[k])
		if err != nil {
			return nil, fmt.Errorf("%w: document %d: %w", ErrManifestInvalid, i+1, err)
		}
		if obj == nil {
			continue
		}
		if obj.GetNamespace() == "" {
			obj.SetNamespace(releaseNamespace)
		}
		out = append(out, obj)
	}
	sort.SliceStable(out, func(i, j int) bool { return IDOf(out[i]).String() < IDOf(out[j]).String() })
	return out, nil
}

// CheckSize returns ErrManifestTooLarge for a manifest of n bytes above
// maxBytes (0: no limit).
func CheckSize(n, maxBytes int) error {
	if maxBytes > 0 && n > maxBytes {
		return fmt.Errorf("%w: %d bytes, limit %d", ErrManifestTooLarge, n, maxBytes)
	}
	return nil
}

func parseDocument(doc string) (*unstructured.Unstructured, error) {
	if strings.TrimSpace(doc) == "" {
		return nil, nil
	}
	var m map[string]any
	if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
		return nil, err
	}
	if len(m) == 0 {
		return nil, nil
	}
	obj := &unstructured.Unstructured{Object: m}
	gvk := obj.GroupVersionKind()
	if gvk.Kind == "" || gvk.Version == "" {
		return nil, fmt.Errorf("object has no apiVersion or kind")
	}
	if obj.GetName() == "" {
		return nil, fmt.Errorf("%s has no metadata.name", gvk.Kind)
	}
	return obj, nil
}
