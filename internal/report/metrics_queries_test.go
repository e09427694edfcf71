package report

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/monitoring"
	"github.com/templatedrift/template-drift-controller/internal/plan"
)

// TestMetricsServeShippedQueries: every templatedrift_ metric that the
// alerts and the dashboard query is registered, served with every label
// they use, once each metric has recorded something. A renamed metric or
// label fails here; controller-runtime's metrics, which only a running
// controller serves, are checked by cmd/template-drift-controller's
// TestMetricsEndpointServesShippedQueries.
func TestMetricsServeShippedQueries(t *testing.T) {
	g := NewWithT(t)
	reg := prometheus.NewPedanticRegistry()
	m := NewMetrics(reg)
	key := client.ObjectKey{Namespace: "fleet", Name: "cluster"}
	m.InitKinds([]string{manifest.Metal3MachineTemplateKind.Kind})
	m.observe(key, plan.Conclusion{Status: metav1.ConditionFalse, Reason: api.CorrectionBlockedReason, Drifted: 1,
		Corrections: []plan.Correction{{Kind: manifest.Metal3DataTemplateKind.Kind, Strategy: plan.StrategyRotate}}})
	m.observePruned([]manifest.ID{{GroupKind: manifest.Metal3DataTemplateKind, Namespace: "fleet", Name: "x-0123456789"}})
	m.Duration(key, time.Now())

	rec := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	exposed, err := monitoring.ParseExposition(rec.Body)
	g.Expect(err).NotTo(HaveOccurred())
	_, queries, err := monitoring.Shipped("../..")
	g.Expect(err).NotTo(HaveOccurred())
	ours := func(metric string) bool { return strings.HasPrefix(metric, "templatedrift_") }
	problems, err := monitoring.Check(queries, exposed, ours)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(problems).To(BeEmpty())

	// Every metric the add-on registers is one the dashboard shows.
	queried := map[string]bool{}
	for _, q := range queries {
		u, err := monitoring.Parse(q.Expr)
		g.Expect(err).NotTo(HaveOccurred())
		for _, s := range u.Selectors {
			queried[strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(s.Metric, "_bucket"), "_sum"), "_count")] = true
		}
	}
	for _, name := range []string{DriftedTemplatesMetric, ConditionMetric, CorrectionsMetric, PrunedMetric, DurationMetric} {
		g.Expect(queried).To(HaveKey(name), "%s is on the dashboard or in an alert", name)
	}
}
