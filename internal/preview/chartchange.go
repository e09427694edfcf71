package preview

import (
	"fmt"
	"slices"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
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
