package report

import (
	"regexp"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/doctable"
	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/plan"
)

// metricsDoc is the user's reference; its "Metrics" table lists the
// add-on's metrics.
const metricsDoc = "../../docs/reference.md"

// docMetric matches a metric of the add-on in a table cell.
var docMetric = regexp.MustCompile(`templatedrift_[a-z_]+`)

// countingRegisterer counts the collectors NewMetrics registers, so that a
// metric added without a series in the test below fails it rather than
// escaping the comparison.
type countingRegisterer struct {
	prometheus.Registerer
	n int
}

func (c *countingRegisterer) MustRegister(cs ...prometheus.Collector) {
	c.n += len(cs)
	c.Registerer.MustRegister(cs...)
}

// TestMetricsTableMatchesRegistry registers the metrics into a fresh
// registry with NewMetrics, records one value in each, gathers them, and
// compares their names with the "Metrics" table of docs/reference.md:
// every metric the add-on registers has a row, and every row names one it
// registers.
func TestMetricsTableMatchesRegistry(t *testing.T) {
	g := NewWithT(t)
	reg := prometheus.NewRegistry()
	counting := &countingRegisterer{Registerer: reg}
	m := NewMetrics(counting)
	key := client.ObjectKey{Namespace: "fleet", Name: "cluster"}
	m.InitKinds([]string{manifest.Metal3MachineTemplateKind.Kind})
	m.observe(key, plan.Conclusion{Status: metav1.ConditionTrue, Reason: api.DriftCorrectedReason, Drifted: 0})
	m.observePruned([]manifest.ID{{GroupKind: manifest.Metal3DataTemplateKind, Namespace: "fleet", Name: "x-0123456789"}})
	m.Duration(key, time.Now())
	m.ReadUncached(manifest.Metal3MachineTemplateKind.Kind)

	families, err := reg.Gather()
	g.Expect(err).NotTo(HaveOccurred())
	var registered []string
	for _, f := range families {
		registered = append(registered, f.GetName())
	}
	g.Expect(registered).To(HaveLen(counting.n),
		"NewMetrics registers %d collectors but only %v have a series here: record a value in each new metric above", counting.n, registered)

	rows, err := doctable.File(metricsDoc, "Metrics", "name", docMetric)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(rows).NotTo(BeEmpty(), "no metrics found in the %q table of %s", "## Metrics", metricsDoc)

	// Both directions are collected first, so one run names every mismatch.
	var mismatches []string
	if missing := doctable.Missing(registered, rows); len(missing) > 0 {
		mismatches = append(mismatches, "registered by NewMetrics but with no row: "+strings.Join(missing, ", "))
	}
	if unknown := doctable.Missing(rows, registered); len(unknown) > 0 {
		mismatches = append(mismatches, "a row but not registered by NewMetrics: "+strings.Join(unknown, ", "))
	}
	g.Expect(mismatches).To(BeEmpty(), "the metrics table of %s (%q) and the registry disagree:\n%s",
		metricsDoc, "## Metrics", strings.Join(mismatches, "\n"))
}
