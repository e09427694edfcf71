package preview

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// ChartChange says how proposed takes its chart otherwise than live: a
// source, chart or version of spec.chart, a chartRef to another source,
// or a switch between the two. "" means the same chart. Such a change needs
// the proposed chart (--chart): the stored release keeps only the chart it
// was installed with, and rendering that one would preview the old chart
// without a word.
func ChartChange(live, proposed *helmv2.HelmRelease) string {
	before, after := chartOf(live), chartOf(proposed)
	if before == after {
		return ""
	}
	return fmt.Sprintf("from %s to %s", before, after)
}

// chartOf names where a HelmRelease takes its chart from, in a form that
// differs exactly when the chart may: spec.chart's source, chart name,
// version and values files, or spec.chartRef's object.
func chartOf(hr *helmv2.HelmRelease) string {
	switch {
	case hr.Spec.ChartRef != nil:
		r := hr.Spec.ChartRef
		return fmt.Sprintf("chartRef %s %s", r.Kind, objectName(r.Namespace, r.Name, hr.Namespace))
	case hr.Spec.Chart != nil:
		c := hr.Spec.Chart.Spec
		s := fmt.Sprintf("chart %s@%s from %s %s", c.Chart, orAny(c.Version), c.SourceRef.Kind,
			objectName(c.SourceRef.Namespace, c.SourceRef.Name, hr.Namespace))
		if len(c.ValuesFiles) > 0 {
			s += fmt.Sprintf(" with values files %v", slices.Clone(c.ValuesFiles))
		}
		return s
	}
	return "no chart"
}

// objectName is namespace/name, the namespace defaulting to the
// HelmRelease's, as helm-controller resolves a reference.
func objectName(namespace, name, defaultNamespace string) string {
	if namespace == "" {
		namespace = defaultNamespace
	}
	return namespace + "/" + name
}

// orAny is a version, or helm-controller's default when it is empty.
func orAny(version string) string {
	if version == "" {
		return "*"
	}
	return version
}

// The chart sources a chartRef may name, and the fields of their spec that
// choose the chart: which artifact an OCIRepository pulls, which chart
// and version a HelmChart packages.
var chartFields = map[string][][]string{
	"OCIRepository": {{"url"}, {"ref"}, {"layerSelector"}},
	"HelmChart":     {{"chart"}, {"version"}, {"sourceRef"}, {"valuesFiles"}},
}

// SourceChange says how a proposed OCIRepository or HelmChart (as a
// pull request's build has it) chooses another chart than the live one
// (nil when the cluster has none): the fields that differ, or that it is
// new. "" means the same chart, or a kind that is no chart source.
func SourceChange(live, proposed *unstructured.Unstructured) string {
	fields, ok := chartFields[proposed.GetKind()]
	if !ok {
		return ""
	}
	id := proposed.GetKind() + " " + proposed.GetNamespace() + "/" + proposed.GetName()
	if live == nil {
		return "through " + id + ", which the cluster does not have yet"
	}
	var changed []string
	for _, f := range fields {
		path := append([]string{"spec"}, f...)
		a, _, _ := unstructured.NestedFieldNoCopy(live.Object, path...)
		b, _, _ := unstructured.NestedFieldNoCopy(proposed.Object, path...)
		if !equality.Semantic.DeepEqual(a, b) {
			changed = append(changed, fmt.Sprintf("spec.%s %s to %s", strings.Join(f, "."), shown(a), shown(b)))
		}
	}
	if len(changed) == 0 {
		return ""
	}
	return "through " + id + ": " + strings.Join(changed, ", ")
}

// shown is a field's value for a message.
func shown(v any) string {
	if v == nil {
		return "unset"
	}
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(data)
}
