package report

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/plan"
)

// TestMetrics: the gauge follows each compared pass and keeps its value when
// a gate stopped the pass; corrections count by strategy and result; an
// opted-out release's series are dropped.
func TestMetrics(t *testing.T) {
	g := NewWithT(t)
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	key := client.ObjectKey{Namespace: "fleet", Name: "cluster"}
	other := client.ObjectKey{Namespace: "fleet", Name: "other"}
	gauge := func(k client.ObjectKey) float64 {
		return testutil.ToFloat64(m.drifted.WithLabelValues(k.Namespace, k.Name))
	}

	m.observe(key, plan.Conclusion{Drifted: 3})
	m.observe(other, plan.Conclusion{Drifted: 1})
	g.Expect(gauge(key)).To(Equal(3.0))
	m.observe(key, plan.Conclusion{Drifted: plan.UnknownDrift})
	g.Expect(gauge(key)).To(Equal(3.0), "a pass that did not compare templates leaves the gauge alone")
	m.observe(key, plan.Conclusion{Silent: true, Drifted: plan.UnknownDrift})
	g.Expect(gauge(key)).To(Equal(3.0), "a suspended release leaves the gauge alone")
	m.observe(key, plan.Conclusion{Drifted: 0})
	g.Expect(gauge(key)).To(Equal(0.0))
	g.Expect(testutil.CollectAndCount(m.corrections)).To(Equal(0), "no correction, no series")

	m3mt, data := manifest.Metal3MachineTemplateKind.Kind, manifest.Metal3DataTemplateKind.Kind
	m.observe(key, plan.Conclusion{Corrections: []plan.Correction{{Kind: m3mt, Strategy: plan.StrategyRotate}, {Kind: data, Strategy: plan.StrategyInPlace}}})
	m.observe(key, plan.Conclusion{Corrections: []plan.Correction{{Kind: m3mt, Strategy: plan.StrategyRotate}}})
	m.observe(key, plan.Conclusion{Corrections: []plan.Correction{{Kind: m3mt, Strategy: plan.StrategyRecreate}, {Kind: m3mt, Strategy: plan.StrategyInPlace}},
		CorrectionsFailed: true, Drifted: 2})
	count := func(kind string, s plan.Strategy, result string) float64 {
		return testutil.ToFloat64(m.corrections.WithLabelValues(kind, string(s), result))
	}
	g.Expect(count(m3mt, plan.StrategyRotate, "success")).To(Equal(2.0))
	g.Expect(count(data, plan.StrategyInPlace, "success")).To(Equal(1.0))
	g.Expect(count(m3mt, plan.StrategyRecreate, "failure")).To(Equal(1.0))
	g.Expect(count(m3mt, plan.StrategyInPlace, "failure")).To(Equal(1.0))
	g.Expect(testutil.CollectAndCount(m.corrections)).To(Equal(4), "only the series counted above")
	g.Expect(gauge(key)).To(Equal(2.0))

	m.Duration(key, time.Now().Add(-time.Second))
	m.Duration(other, time.Now())
	g.Expect(testutil.CollectAndCount(m.duration)).To(Equal(2))

	m.observe(key, plan.Conclusion{Remove: true, Drifted: plan.UnknownDrift})
	g.Expect(testutil.CollectAndCount(m.drifted)).To(Equal(1), "an opted-out release has no gauge series; the other keeps its own")
	g.Expect(testutil.CollectAndCount(m.duration)).To(Equal(1), "nor a duration series")
	g.Expect(gauge(other)).To(Equal(1.0))
	g.Expect(testutil.CollectAndCount(m.corrections)).To(Equal(4), "the counter is not per release and is kept")

	m.Forget(other)
	g.Expect(testutil.CollectAndCount(m.drifted)).To(Equal(0))
	g.Expect(testutil.CollectAndCount(m.duration)).To(Equal(0))

	var nilMetrics *Metrics // a nil Metrics records nothing and does not panic
	nilMetrics.observe(key, plan.Conclusion{Drifted: 1, Corrections: []plan.Correction{{Kind: "Metal3MachineTemplate", Strategy: plan.StrategyRotate}}})
	nilMetrics.InitKinds([]string{"Metal3MachineTemplate"})
	nilMetrics.Duration(key, time.Now())
	nilMetrics.Forget(key)
}

// TestMetricsFromSummaries: the correction counted once for the pass that
// wrote it, not for the quiet passes that report it after.
func TestMetricsFromSummaries(t *testing.T) {
	g := NewWithT(t)
	m := NewMetrics(prometheus.NewRegistry())
	key := client.ObjectKey{Namespace: "fleet", Name: "cluster-a"}

	m.observe(key, Summarize(result(plan.ModeEnabled, 2, tmpl("workers", plan.OutcomeDrifted, rotated))).Conclusion)
	for range 3 {
		m.observe(key, Summarize(result(plan.ModeEnabled, 0, tmpl("workers", plan.OutcomeCorrected, both(rotated, withChanges)))).Conclusion)
	}
	g.Expect(testutil.ToFloat64(m.corrections.WithLabelValues("Metal3MachineTemplate", string(plan.StrategyRotate), "success"))).To(Equal(1.0))
	g.Expect(testutil.CollectAndCount(m.corrections)).To(Equal(1))
	g.Expect(testutil.ToFloat64(m.drifted.WithLabelValues("fleet", "cluster-a"))).To(Equal(0.0))
}

// TestMetricsPruned: every replacement a pass deleted counts once, by kind;
// a pass that deleted none adds no series; a nil Metrics records nothing.
func TestMetricsPruned(t *testing.T) {
	g := NewWithT(t)
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	count := func(kind string) float64 { return testutil.ToFloat64(m.pruned.WithLabelValues(kind)) }
	m3mt := func(name string) manifest.ID {
		return manifest.ID{GroupKind: manifest.Metal3MachineTemplateKind, Namespace: "fleet", Name: name}
	}
	data := manifest.ID{GroupKind: manifest.Metal3DataTemplateKind, Namespace: "fleet", Name: "workers-data-1111111111"}

	m.observePruned(nil)
	g.Expect(testutil.CollectAndCount(m.pruned)).To(Equal(0), "nothing pruned, no series")

	m.observePruned([]manifest.ID{m3mt("workers-0a1b2c3d4e"), data})
	m.observePruned([]manifest.ID{m3mt("cp-9999999999")})
	g.Expect(count("Metal3MachineTemplate")).To(Equal(2.0))
	g.Expect(count("Metal3DataTemplate")).To(Equal(1.0))
	g.Expect(testutil.CollectAndCount(m.pruned)).To(Equal(2), "one series per kind, not per object or release")

	// Through Summarize, as Write reads it.
	res := result(plan.ModeEnabled, 0, tmpl("workers", plan.OutcomeInSync, nil))
	res.Pruned = []manifest.ID{data}
	m.observePruned(Summarize(res).Pruned)
	g.Expect(count("Metal3DataTemplate")).To(Equal(2.0))

	// The counter is registered under its documented name.
	families, err := reg.Gather()
	g.Expect(err).NotTo(HaveOccurred())
	var names []string
	for _, f := range families {
		names = append(names, f.GetName())
	}
	g.Expect(names).To(ContainElement("templatedrift_pruned_replacements_total"))

	var nilMetrics *Metrics
	nilMetrics.observePruned([]manifest.ID{data}) // does not panic
}
