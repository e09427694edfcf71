package monitoring

import "strings"

// TargetLabels are the labels Prometheus Operator puts on every series it
// scrapes from a pod (a ServiceMonitor adds service). When the exposition
// has a label of the same name, Prometheus keeps it as exported_<name>:
// the HelmRelease's namespace label is queried as exported_namespace, as
// in Flux's monitoring.
var TargetLabels = map[string]bool{
	"namespace": true, "pod": true, "container": true, "endpoint": true,
	"job": true, "instance": true, "service": true,
}

// ScrapeGenerated are the series Prometheus writes itself for every
// target, which no exposition holds.
var ScrapeGenerated = map[string]bool{
	"up": true, "scrape_duration_seconds": true, "scrape_samples_scraped": true,
	"scrape_samples_post_metric_relabeling": true, "scrape_series_added": true,
}

// ExposedLabel returns the exposition's name of a label a query uses, and
// false when Prometheus sets it on the target (the query's namespace is
// the pod's, for example).
func ExposedLabel(label string) (string, bool) {
	if TargetLabels[label] {
		return "", false
	}
	if rest, ok := strings.CutPrefix(label, "exported_"); ok && TargetLabels[rest] {
		return rest, true
	}
	return label, true
}
