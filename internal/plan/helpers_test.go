package plan_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/templatedrift/template-drift-controller/internal/manifest"
)

// fromYAML parses one Kubernetes object written as YAML, failing the test on
// a syntax error so a broken fixture is never mistaken for a passing case.
func fromYAML(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(y), &m); err != nil {
		t.Fatalf("bad fixture: %v\n%s", err, y)
	}
	if len(m) == 0 {
		t.Fatalf("empty fixture:\n%s", y)
	}
	return &unstructured.Unstructured{Object: m}
}

// id builds a manifest.ID in one line.
func id(gk schema.GroupKind, namespace, name string) manifest.ID {
	return manifest.ID{GroupKind: gk, Namespace: namespace, Name: name}
}
