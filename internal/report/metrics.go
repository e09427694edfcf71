package report

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/plan"
)

// Metrics are the add-on's Prometheus metrics.
type Metrics struct {
	drifted     *prometheus.GaugeVec
	corrections *prometheus.CounterVec
	pruned      *prometheus.CounterVec
	duration    *prometheus.HistogramVec
}

// NewMetrics creates the metrics and registers them on reg (the manager's
// registry, controller-runtime's metrics.Registry, in production).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		drifted: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "templatedrift_drifted_templates",
			Help: "Templates of a HelmRelease that differ from its release manifest and are not corrected.",
		}, []string{"namespace", "name"}),
		corrections: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "templatedrift_corrections_total",
			Help: "Template corrections, by strategy and result.",
		}, []string{"strategy", "result"}),
		pruned: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "templatedrift_pruned_replacements_total",
			Help: "Unused replacements the add-on created and then deleted, by kind.",
		}, []string{"kind"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "templatedrift_reconcile_duration_seconds",
			Help:    "Duration of one pass over a HelmRelease.",
			Buckets: prometheus.ExponentialBuckets(0.01, 2, 12),
		}, []string{"namespace", "name"}),
	}
	reg.MustRegister(m.drifted, m.corrections, m.pruned, m.duration)
	return m
}

// Duration records how long a pass took.
func (m *Metrics) Duration(key client.ObjectKey, start time.Time) {
	if m != nil {
		m.duration.WithLabelValues(key.Namespace, key.Name).Observe(time.Since(start).Seconds())
	}
}

// Forget drops a deleted HelmRelease's series.
func (m *Metrics) Forget(key client.ObjectKey) {
	if m != nil {
		m.drifted.DeleteLabelValues(key.Namespace, key.Name)
		m.duration.DeleteLabelValues(key.Namespace, key.Name)
	}
}

// observePruned counts the replacements a pass deleted.
func (m *Metrics) observePruned(pruned []manifest.ID) {
	if m == nil {
		return
	}
	for _, id := range pruned {
		m.pruned.WithLabelValues(id.Kind).Inc()
	}
}

// observe records a pass's conclusion: the gauge (kept as it was when the
// pass did not compare templates, dropped when the release opted out) and
// one count per correction the pass made or tried.
func (m *Metrics) observe(key client.ObjectKey, c plan.Conclusion) {
	if m == nil {
		return
	}
	if c.Remove {
		m.Forget(key)
		return
	}
	if c.Drifted != plan.UnknownDrift {
		m.drifted.WithLabelValues(key.Namespace, key.Name).Set(float64(c.Drifted))
	}
	result := "success"
	if c.CorrectionsFailed {
		result = "failure"
	}
	for _, s := range c.Corrections {
		m.corrections.WithLabelValues(string(s), result).Inc()
	}
}
