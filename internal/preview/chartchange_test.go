package preview

import (
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestChartChange: every way a proposed HelmRelease can take another
// chart is a change, and nothing else is.
func TestChartChange(t *testing.T) {
	chartFrom := func(version, source string, files ...string) *helmv2.HelmRelease {
		hr := &helmv2.HelmRelease{}
		hr.Namespace = "fleet"
		hr.Spec.Chart = &helmv2.HelmChartTemplate{Spec: helmv2.HelmChartTemplateSpec{Chart: "cluster", Version: version,
			SourceRef: helmv2.CrossNamespaceObjectReference{Kind: "HelmRepository", Name: source}, ValuesFiles: files}}
		return hr
	}
	ref := func(kind, name, namespace string) *helmv2.HelmRelease {
		hr := &helmv2.HelmRelease{}
		hr.Namespace = "fleet"
		hr.Spec.ChartRef = &helmv2.CrossNamespaceSourceReference{Kind: kind, Name: name, Namespace: namespace}
		return hr
	}
	for _, tc := range []struct {
		name           string
		live, proposed *helmv2.HelmRelease
		want           string
	}{
		{"same chart", chartFrom("1.0.0", "charts"), chartFrom("1.0.0", "charts"), ""},
		{"version bump", chartFrom("1.0.0", "charts"), chartFrom("1.1.0", "charts"),
			"from chart cluster@1.0.0 from HelmRepository fleet/charts to chart cluster@1.1.0 from HelmRepository fleet/charts"},
		{"another source", chartFrom("1.0.0", "charts"), chartFrom("1.0.0", "mirror"),
			"from chart cluster@1.0.0 from HelmRepository fleet/charts to chart cluster@1.0.0 from HelmRepository fleet/mirror"},
		{"values files", chartFrom("1.0.0", "charts"), chartFrom("1.0.0", "charts", "values-prod.yaml"),
			"from chart cluster@1.0.0 from HelmRepository fleet/charts to chart cluster@1.0.0 from HelmRepository fleet/charts with values files [values-prod.yaml]"},
		{"no version is any", chartFrom("", "charts"), chartFrom("*", "charts"), ""},
		{"same chartRef, namespace defaulted", ref("OCIRepository", "cluster", ""), ref("OCIRepository", "cluster", "fleet"), ""},
		{"another chartRef", ref("OCIRepository", "cluster", ""), ref("OCIRepository", "cluster-v2", ""),
			"from chartRef OCIRepository fleet/cluster to chartRef OCIRepository fleet/cluster-v2"},
		{"chartRef kind", ref("OCIRepository", "cluster", ""), ref("HelmChart", "cluster", ""),
			"from chartRef OCIRepository fleet/cluster to chartRef HelmChart fleet/cluster"},
		{"chart to chartRef", chartFrom("1.0.0", "charts"), ref("OCIRepository", "cluster", ""),
			"from chart cluster@1.0.0 from HelmRepository fleet/charts to chartRef OCIRepository fleet/cluster"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			NewWithT(t).Expect(ChartChange(tc.live, tc.proposed)).To(Equal(tc.want))
		})
	}
}

// TestSourceChange: a pull request that bumps the chart through the
// OCIRepository or HelmChart a chartRef names is a chart change; its
// interval is not.
func TestSourceChange(t *testing.T) {
	source := func(kind string, spec map[string]any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
		u.SetKind(kind)
		u.SetNamespace("fleet")
		u.SetName("cluster")
		return u
	}
	oci := func(tag, interval string) *unstructured.Unstructured {
		return source("OCIRepository", map[string]any{"url": "oci://r/cluster", "interval": interval, "ref": map[string]any{"tag": tag}})
	}
	for _, tc := range []struct {
		name           string
		live, proposed *unstructured.Unstructured
		want           string
	}{
		{"same tag", oci("1.0.0", "1m"), oci("1.0.0", "1m"), ""},
		{"only the interval", oci("1.0.0", "1m"), oci("1.0.0", "5m"), ""},
		{"tag bump", oci("1.0.0", "1m"), oci("1.1.0", "1m"),
			`through OCIRepository fleet/cluster: spec.ref {"tag":"1.0.0"} to {"tag":"1.1.0"}`},
		{"new source", nil, oci("1.0.0", "1m"), "through OCIRepository fleet/cluster, which the cluster does not have yet"},
		{"HelmChart version", source("HelmChart", map[string]any{"chart": "cluster", "version": "1.0.0"}),
			source("HelmChart", map[string]any{"chart": "cluster", "version": "2.x"}),
			`through HelmChart fleet/cluster: spec.version "1.0.0" to "2.x"`},
		{"no chart source", source("ConfigMap", nil), source("ConfigMap", map[string]any{"a": "b"}), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			NewWithT(t).Expect(SourceChange(tc.live, tc.proposed)).To(Equal(tc.want))
		})
	}
}
