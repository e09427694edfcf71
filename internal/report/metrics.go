package report

import (
	"sync"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/plan"
)

// The metric names. The alerts in config/prometheus and the dashboard in
// config/grafana query them, and internal/monitoring's tests check every
// name and label those queries use against a running controller: renaming
// one is a breaking change for users' alerts and dashboards.
const (
	DriftedTemplatesMetric = "templatedrift_drifted_templates"
	ConditionMetric        = "templatedrift_templates_in_sync_info"
	CorrectionsMetric      = "templatedrift_corrections_total"
	PrunedMetric           = "templatedrift_pruned_replacements_total"
	DurationMetric         = "templatedrift_reconcile_duration_seconds"
	AwaitingMetric         = "templatedrift_rollouts_awaiting_approval"
	RollingOutMetric       = "templatedrift_rollouts_in_progress"
)

// Results of CorrectionsMetric.
const (
	resultSuccess = "success"
	resultFailure = "failure"
)

// durationBuckets are gotk_reconcile_duration_seconds' buckets
// (fluxcd/pkg/runtime/metrics): 10 ms to 30 min, so a pass that waits for a
// recreate's delete or a slow remote cluster still lands in a bucket, and a
// panel can put both histograms side by side.
var durationBuckets = prometheus.ExponentialBucketsRange(10e-3, 1800, 10)

// correctionStrategies are the strategies a correction is counted under
// (auto resolves to one of them before anything is written).
var correctionStrategies = []plan.Strategy{plan.StrategyInPlace, plan.StrategyRotate, plan.StrategyRecreate}

// Metrics are the add-on's Prometheus metrics.
type Metrics struct {
	drifted     *prometheus.GaugeVec
	condition   *prometheus.GaugeVec
	corrections *prometheus.CounterVec
	pruned      *prometheus.CounterVec
	duration    *prometheus.HistogramVec
	awaiting    *prometheus.GaugeVec

	// mu guards conditions: the status and reason of each release's one
	// condition series, so a pass replaces it by its exact labels. A
	// partial-match delete looks at every series, one per release: at
	// thousands of releases that scan was a seventh of the controller's
	// CPU while a fleet converged.
	mu         sync.Mutex
	conditions map[client.ObjectKey]conditionLabels
	reg        prometheus.Registerer
}

// conditionLabels are the labels of a release's condition series besides
// its namespace and name.
type conditionLabels struct{ status, reason string }

// NewMetrics creates the metrics and registers them on reg (the manager's
// registry, controller-runtime's metrics.Registry, in production).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		conditions: map[client.ObjectKey]conditionLabels{},
		drifted: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: DriftedTemplatesMetric,
			Help: "Templates of a HelmRelease that differ from its release manifest and are not corrected.",
		}, []string{"namespace", "name"}),
		condition: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: ConditionMetric,
			Help: "The TemplatesInSync condition of an opted-in HelmRelease: 1 for its current status and reason.",
		}, []string{"namespace", "name", "status", "reason"}),
		corrections: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: CorrectionsMetric,
			Help: "Template corrections, by template kind, strategy and result.",
		}, []string{"kind", "strategy", "result"}),
		pruned: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: PrunedMetric,
			Help: "Unused replacements the add-on created and then deleted, by kind.",
		}, []string{"kind"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    DurationMetric,
			Help:    "Duration of one pass over a HelmRelease.",
			Buckets: durationBuckets,
		}, []string{"kind", "namespace", "name"}),
		awaiting: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: AwaitingMetric,
			Help: "Corrections of a HelmRelease that would roll Machines and wait for an approval.",
		}, []string{"namespace", "name"}),
	}
	reg.MustRegister(m.drifted, m.condition, m.corrections, m.pruned, m.duration, m.awaiting)
	m.reg = reg
	return m
}

// CountRollingOut registers the gauge of the releases with a rollout the
// controller made in progress, read from inProgress (the rollout budget's
// count) when scraped.
func (m *Metrics) CountRollingOut(inProgress func() int) {
	if m == nil {
		return
	}
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: RollingOutMetric,
		Help: "HelmReleases with a rollout the controller made in progress, as their last passes read their consumers.",
	}, func() float64 { return float64(inProgress()) }))
}

// InitKinds creates the counters of the template kinds at zero, so that
// rate() and increase() see the first correction or prune of a kind, and a
// dashboard lists the kinds before anything happened to them.
func (m *Metrics) InitKinds(kinds []string) {
	if m == nil {
		return
	}
	for _, k := range kinds {
		m.pruned.WithLabelValues(k)
		for _, s := range correctionStrategies {
			m.corrections.WithLabelValues(k, string(s), resultSuccess)
			m.corrections.WithLabelValues(k, string(s), resultFailure)
		}
	}
}

// Duration records how long a pass took.
func (m *Metrics) Duration(key client.ObjectKey, start time.Time) {
	if m != nil {
		m.duration.WithLabelValues(helmv2.HelmReleaseKind, key.Namespace, key.Name).Observe(time.Since(start).Seconds())
	}
}

// Forget drops a deleted HelmRelease's series.
func (m *Metrics) Forget(key client.ObjectKey) {
	if m != nil {
		m.drifted.DeleteLabelValues(key.Namespace, key.Name)
		m.awaiting.DeleteLabelValues(key.Namespace, key.Name)
		m.setCondition(key, nil)
		m.duration.DeleteLabelValues(helmv2.HelmReleaseKind, key.Namespace, key.Name)
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

// observe records a pass's conclusion: the gauges (kept as they were when
// the pass did not compare templates, or wrote nothing because the release
// is suspended; dropped when the release opted out) and one count per
// correction the pass made or tried.
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
		m.awaiting.WithLabelValues(key.Namespace, key.Name).Set(float64(c.AwaitingApproval))
	}
	if !c.Silent && c.Reason != "" {
		m.setCondition(key, &conditionLabels{status: string(c.Status), reason: c.Reason})
	}
	result := resultSuccess
	if c.CorrectionsFailed {
		result = resultFailure
	}
	for _, corr := range c.Corrections {
		m.corrections.WithLabelValues(corr.Kind, string(corr.Strategy), result).Inc()
	}
}

// setCondition sets to as the release's one condition series, or none when
// to is nil: the previous status and reason go.
func (m *Metrics) setCondition(key client.ObjectKey, to *conditionLabels) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if from, ok := m.conditions[key]; ok && (to == nil || from != *to) {
		m.condition.DeleteLabelValues(key.Namespace, key.Name, from.status, from.reason)
	}
	if to == nil {
		delete(m.conditions, key)
		return
	}
	m.conditions[key] = *to
	m.condition.WithLabelValues(key.Namespace, key.Name, to.status, to.reason).Set(1)
}
