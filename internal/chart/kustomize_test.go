package chart_test

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	. "github.com/onsi/gomega"
)

// helmOnlyLabels are the labels only a Helm release carries.
var helmOnlyLabels = []string{"helm.sh/chart", "app.kubernetes.io/version", "app.kubernetes.io/managed-by"}

// TestConfigMatchesChart keeps config/default (kubectl apply -k) equivalent
// to the chart with its default values: the same objects, equal in every
// field but the Helm-only labels, so both install the same controller. The
// ClusterRole's rules are compared as grants by TestClusterRoleMatchesGenerated
// (controller-gen orders and groups them its own way). The chart's hooks
// (the helm test Pod) are not installed objects, and have no counterpart.
func TestConfigMatchesChart(t *testing.T) {
	g := NewWithT(t)
	_, chartObjs := mustRender(t, "")
	chart := byKey(t, withoutHooks(chartObjs), helmOnlyLabels...)
	config := byKey(t, buildKustomize(t, "config/default"))
	g.Expect(slices.Sorted(maps.Keys(config))).To(Equal(slices.Sorted(maps.Keys(chart))))
	for k, want := range chart {
		g.Expect(cmp.Diff(strings.Split(want, "\n"), strings.Split(config[k], "\n"))).To(BeEmpty(), "%s differs between the chart (-) and config/default (+)", k)
	}
}

// byKey indexes objs by objectKey as YAML text (readable diffs), without
// ClusterRole rules and the given labels.
func byKey(t testing.TB, objs []*unstructured.Unstructured, dropLabels ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, o := range objs {
		o = o.DeepCopy()
		labels := o.GetLabels()
		for _, l := range dropLabels {
			delete(labels, l)
		}
		o.SetLabels(labels)
		if o.GetKind() == "ClusterRole" {
			unstructured.RemoveNestedField(o.Object, "rules")
		}
		data, err := yaml.Marshal(o.Object)
		if err != nil {
			t.Fatal(err)
		}
		out[objectKey(o)] = string(data)
	}
	return out
}
