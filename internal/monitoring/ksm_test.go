package monitoring

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/templatedrift/template-drift-controller/api"
)

// ksmFile is the kube-state-metrics snippet, from the repository root.
const ksmFile = "config/kube-state-metrics/helmrelease.yaml"

// ksmConfig is the part of kube-state-metrics' CustomResourceStateMetrics
// that the snippet uses; strict parsing catches a misspelt field.
type ksmConfig struct {
	Kind string `json:"kind"`
	Spec struct {
		Resources []struct {
			GroupVersionKind struct {
				Group, Version, Kind string
			} `json:"groupVersionKind"`
			MetricNamePrefix string `json:"metricNamePrefix"`
			Metrics          []struct {
				Name string `json:"name"`
				Help string `json:"help"`
				Each struct {
					Type string `json:"type"`
					Info struct {
						LabelsFromPath map[string][]string `json:"labelsFromPath"`
					} `json:"info"`
				} `json:"each"`
				LabelsFromPath map[string][]string `json:"labelsFromPath"`
			} `json:"metrics"`
		} `json:"resources"`
	} `json:"spec"`
}

// TestKubeStateMetricsSnippet: the snippet builds gotk_resource_info for
// HelmReleases, and every label path resolves, the way kube-state-metrics
// resolves it, on a HelmRelease of helm-controller's API: Flux's labels,
// the TemplatesInSync condition's status and reason, and those of
// helm-controller's Drifted. Without drift detection, a HelmRelease has no
// Drifted condition and no drifted labels.
func TestKubeStateMetricsSnippet(t *testing.T) {
	g := NewWithT(t)
	data, err := os.ReadFile(root + "/" + ksmFile)
	g.Expect(err).NotTo(HaveOccurred())
	var cfg ksmConfig
	g.Expect(yaml.UnmarshalStrict(data, &cfg)).To(Succeed())
	g.Expect(cfg.Kind).To(Equal("CustomResourceStateMetrics"))
	g.Expect(cfg.Spec.Resources).To(HaveLen(1))
	r := cfg.Spec.Resources[0]
	g.Expect([]string{r.GroupVersionKind.Group, r.GroupVersionKind.Version, r.GroupVersionKind.Kind}).
		To(Equal([]string{helmv2.GroupVersion.Group, helmv2.GroupVersion.Version, helmv2.HelmReleaseKind}))
	g.Expect(r.MetricNamePrefix + "_" + r.Metrics[0].Name).To(Equal("gotk_resource_info"))
	m := r.Metrics[0]
	g.Expect(m.Each.Type).To(Equal("Info"))

	hr := helmv2.HelmRelease{
		ObjectMeta: metav1.ObjectMeta{Namespace: "fleet", Name: "cluster"},
		Spec:       helmv2.HelmReleaseSpec{Suspend: false, ChartRef: &helmv2.CrossNamespaceSourceReference{Kind: "OCIRepository", Name: "cluster-chart"}},
		Status: helmv2.HelmReleaseStatus{
			Conditions: []metav1.Condition{
				{Type: "Ready", Status: metav1.ConditionTrue, Reason: "UpgradeSucceeded"},
				{Type: api.TemplatesInSyncCondition, Status: metav1.ConditionFalse, Reason: api.DriftDetectedReason},
				{Type: helmv2.DriftedCondition, Status: metav1.ConditionFalse, Reason: helmv2.NoDriftDetectedReason},
			},
			History: helmv2.Snapshots{{Name: "cluster", Namespace: "fleet", Version: 2, ChartName: "cluster", ChartVersion: "1.2.3", AppVersion: "v1"}},
		},
	}
	labels := func(hr helmv2.HelmRelease) map[string]any {
		raw, err := json.Marshal(hr)
		g.Expect(err).NotTo(HaveOccurred())
		var obj map[string]any
		g.Expect(json.Unmarshal(raw, &obj)).To(Succeed())
		got := map[string]any{}
		for label, path := range m.Each.Info.LabelsFromPath {
			got[label] = resolve(obj, path)
		}
		for label, path := range m.LabelsFromPath {
			got[label] = resolve(obj, path)
		}
		return got
	}
	want := map[string]any{
		"name": "cluster", "exported_namespace": "fleet", "ready": "True", "suspended": nil,
		"revision": "1.2.3", "chart_name": "cluster", "chart_app_version": "v1",
		"chart_ref_name": "cluster-chart", "chart_source_name": nil,
		"templates_in_sync": "False", "templates_in_sync_reason": api.DriftDetectedReason,
		"drifted": "False", "drifted_reason": helmv2.NoDriftDetectedReason,
	}
	g.Expect(labels(hr)).To(Equal(want), "suspended and the chart source are unset (omitted) on this HelmRelease")

	hr.Status.Conditions[2] = metav1.Condition{Type: helmv2.DriftedCondition, Status: metav1.ConditionTrue, Reason: helmv2.DriftDetectedReason}
	want["drifted"], want["drifted_reason"] = "True", helmv2.DriftDetectedReason
	g.Expect(labels(hr)).To(Equal(want), "helm-controller found drift")

	hr.Status.Conditions = hr.Status.Conditions[:2]
	want["drifted"], want["drifted_reason"] = nil, nil
	g.Expect(labels(hr)).To(Equal(want), "drift detection never on: no Drifted condition")
}

// resolve follows a kube-state-metrics path: map keys, list indexes, and
// [key=value] to pick the list element whose key has value. It returns nil
// where the path leads nowhere (kube-state-metrics then sets no label).
func resolve(v any, path []string) any {
	for _, p := range path {
		switch cur := v.(type) {
		case map[string]any:
			v = cur[p]
		case []any:
			if sel, ok := strings.CutPrefix(p, "["); ok {
				key, want, _ := strings.Cut(strings.TrimSuffix(sel, "]"), "=")
				v = nil
				for _, e := range cur {
					if m, ok := e.(map[string]any); ok && m[key] == want {
						v = m
						break
					}
				}
				continue
			}
			i, err := strconv.Atoi(p)
			if err != nil || i >= len(cur) {
				return nil
			}
			v = cur[i]
		default:
			return nil
		}
	}
	return v
}
