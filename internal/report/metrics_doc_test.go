package report

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/plan"
	"github.com/templatedrift/template-drift-controller/internal/testenv/doctable"
)

// referenceDoc is the user's reference; its "Metrics" table lists the
// add-on's metrics, and other tables the condition's reasons and the
// events.
const referenceDoc = "../../docs/reference.md"

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
// registry with NewMetrics and CountRollingOut, records one value in each, gathers them, and
// compares them with the "Metrics" table of docs/reference.md: every
// metric the add-on registers has a row, every row names one it registers,
// and each row's type and labels are the registered metric's.
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
	m.CountRollingOut(func() int { return 1 })

	families, err := reg.Gather()
	g.Expect(err).NotTo(HaveOccurred())
	var registered []string
	// kinds and labels are each family's type and label names, by name.
	kinds, labels := map[string]string{}, map[string][]string{}
	for _, f := range families {
		registered = append(registered, f.GetName())
		kinds[f.GetName()] = strings.ToLower(f.GetType().String())
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				labels[f.GetName()] = append(labels[f.GetName()], l.GetName())
			}
		}
	}
	g.Expect(registered).To(HaveLen(counting.n),
		"NewMetrics registers %d collectors but only %v have a series here: record a value in each new metric above", counting.n, registered)

	rows, err := doctable.File(referenceDoc, "Metrics", "name", docMetric)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(rows).NotTo(BeEmpty(), "no metrics found in the %q table of %s", "## Metrics", referenceDoc)

	// Both directions are collected first, so one run names every mismatch.
	var mismatches []string
	if missing := doctable.Missing(registered, rows); len(missing) > 0 {
		mismatches = append(mismatches, "registered by NewMetrics but with no row: "+strings.Join(missing, ", "))
	}
	if unknown := doctable.Missing(rows, registered); len(unknown) > 0 {
		mismatches = append(mismatches, "a row but not registered by NewMetrics: "+strings.Join(unknown, ", "))
	}
	table, err := doctable.FileRows(referenceDoc, "Metrics", "name")
	g.Expect(err).NotTo(HaveOccurred())
	for _, row := range table {
		for _, name := range docMetric.FindAllString(row["name"], -1) {
			if _, ok := kinds[name]; !ok {
				continue // named above
			}
			if kind := strings.TrimSpace(row["type"]); kind != kinds[name] {
				mismatches = append(mismatches, fmt.Sprintf("%s: the row's type is %q, the registered metric is a %s", name, kind, kinds[name]))
			}
			docLabels, got := sorted(doctable.Code(row["labels"])), sorted(labels[name])
			if !slices.Equal(docLabels, got) {
				mismatches = append(mismatches, fmt.Sprintf("%s: the row's labels are %q, the registered metric's %q", name, docLabels, got))
			}
		}
	}
	g.Expect(mismatches).To(BeEmpty(), "the metrics table of %s (%q) and the registry disagree:\n%s",
		referenceDoc, "## Metrics", strings.Join(mismatches, "\n"))
}

// sorted returns names sorted, each once.
func sorted(names []string) []string {
	out := slices.Clone(names)
	slices.Sort(out)
	return slices.Compact(out)
}
