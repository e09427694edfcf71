package chart_test

import (
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	. "github.com/onsi/gomega"
)

// monitoringValues switch on every monitoring object of the chart.
var monitoringValues = map[string]any{
	"podMonitor":       map[string]any{"enabled": true},
	"prometheusRule":   map[string]any{"enabled": true},
	"grafanaDashboard": map[string]any{"enabled": true},
}

// monitoringFiles are the files of config/ that are the chart's monitoring
// templates rendered with the default values, and the kustomization that
// lists each.
var monitoringFiles = []struct {
	// path is the file, below the repository root.
	path string
	// template is the chart's template it is rendered from.
	template string
	// kustomization is the config/ directory whose build holds it.
	kustomization string
}{
	{path: "config/prometheus/podmonitor.yaml", template: "podmonitor.yaml", kustomization: "config/prometheus"},
	{path: "config/prometheus/prometheusrule.yaml", template: "prometheusrule.yaml", kustomization: "config/prometheus"},
	{path: "config/grafana/dashboard.yaml", template: "grafana-dashboard.yaml", kustomization: "config/grafana"},
}

// helmOnlyLabelLine matches a rendered line that sets one of helmOnlyLabels.
var helmOnlyLabelLine = regexp.MustCompile(`^\s+(helm\.sh/chart|app\.kubernetes\.io/version|app\.kubernetes\.io/managed-by):`)

// generatedHeader starts every file of monitoringFiles.
const generatedHeader = `# Generated from charts/template-drift-controller with the default values and
# the object enabled; do not edit. After a change to the chart, run
#   go test ./internal/chart/ -run TestMonitoringConfigMatchesChart -update
`

// TestMonitoringConfigMatchesChart keeps config/prometheus and
// config/grafana the chart's monitoring objects with their default values,
// without the Helm-only labels, so the rules, the PodMonitor and the
// dashboard have one source. -update rewrites the files from the chart.
func TestMonitoringConfigMatchesChart(t *testing.T) {
	g := NewWithT(t)
	files, err := renderChart(t, monitoringValues)
	g.Expect(err).NotTo(HaveOccurred())
	objs, err := decodeObjects([]byte(manifest(files)))
	g.Expect(err).NotTo(HaveOccurred())

	byDir := map[string][]string{}
	for _, f := range monitoringFiles {
		rendered, ok := files["template-drift-controller/templates/"+f.template]
		g.Expect(ok).To(BeTrue(), "the chart renders %s", f.template)
		var lines []string
		for _, l := range strings.Split(strings.TrimSpace(rendered), "\n") {
			if !helmOnlyLabelLine.MatchString(l) {
				lines = append(lines, l)
			}
		}
		want := generatedHeader + strings.Join(lines, "\n") + "\n"
		if *update {
			g.Expect(os.WriteFile(repoPath(t, f.path), []byte(want), 0o644)).To(Succeed())
		}
		got, err := os.ReadFile(repoPath(t, f.path))
		g.Expect(err).NotTo(HaveOccurred(), "run with -update to create it")
		g.Expect(cmp.Diff(strings.Split(want, "\n"), strings.Split(string(got), "\n"))).To(BeEmpty(),
			"%s differs from the chart (-chart +file); run with -update if the chart changed", f.path)

		// The file is the chart's object, but for the Helm-only labels.
		fromFile := readObjects(t, f.path)
		g.Expect(fromFile).To(HaveLen(1), f.path)
		key := objectKey(fromFile[0])
		g.Expect(byKey(t, fromFile)).To(Equal(map[string]string{key: byKey(t, objs, helmOnlyLabels...)[key]}))
		byDir[f.kustomization] = append(byDir[f.kustomization], key)
	}
	for dir, keys := range byDir {
		built := byKey(t, buildKustomize(t, dir))
		g.Expect(slices.Sorted(maps.Keys(built))).To(Equal(slices.Sorted(slices.Values(keys))), "%s builds exactly its files", dir)
	}
}

// TestMonitoringOptIn: without the values, the chart renders no monitoring
// object, so config/default (its defaults) has none either.
func TestMonitoringOptIn(t *testing.T) {
	g := NewWithT(t)
	_, objs := mustRender(t, "")
	for _, kind := range []string{"PodMonitor", "PrometheusRule", "ServiceMonitor", "ConfigMap"} {
		g.Expect(ofKind(objs, kind)).To(BeEmpty(), kind)
	}
}

// TestDashboardConfigMap: the dashboard ConfigMap carries the label
// Grafana's sidecar selects and holds the chart's dashboard file as valid
// JSON, byte for byte.
func TestDashboardConfigMap(t *testing.T) {
	g := NewWithT(t)
	files, err := renderChart(t, monitoringValues)
	g.Expect(err).NotTo(HaveOccurred())
	objs, err := decodeObjects([]byte(manifest(files)))
	g.Expect(err).NotTo(HaveOccurred())
	cms := withSuffix(ofKind(objs, "ConfigMap"), "-dashboard")
	g.Expect(cms).To(HaveLen(1))
	g.Expect(cms[0].GetLabels()).To(HaveKeyWithValue("grafana_dashboard", "1"))
	g.Expect(cms[0].GetLabels()).To(HaveKeyWithValue("kustomize.toolkit.fluxcd.io/substitute", "disabled"))
	data, _, _ := unstructured.NestedStringMap(cms[0].Object, "data")
	want, err := os.ReadFile(repoPath(t, "charts", "template-drift-controller", "dashboards", "template-drift-controller.json"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(data).To(HaveKeyWithValue("template-drift-controller.json", strings.TrimRight(string(want), "\n")))
	var dashboard map[string]any
	g.Expect(yaml.Unmarshal(want, &dashboard)).To(Succeed())
	g.Expect(dashboard).To(HaveKeyWithValue("uid", "template-drift-controller"))
}

// withSuffix returns the objects whose name ends with suffix.
func withSuffix(objs []*unstructured.Unstructured, suffix string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if strings.HasSuffix(o.GetName(), suffix) {
			out = append(out, o)
		}
	}
	return out
}
