package report

import (
	"testing"

	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestMetrics: the gauge follows each compared pass and keeps its value when
// a gate stopped the pass; corrections count by strategy and result; a
// deleted HelmRelease's series are dropped.
func TestMetrics(t *testing.T) {
	g := NewWithT(t)
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	key := client.ObjectKey{Namespace: "fleet", Name: "cluster"}

	m.observe(key, Outcome{Drifted: 3})
	g.Expect(testutil.ToFloat64(m.drifted.WithLabelValues("fleet", "cluster"))).To(Equal(3.0))
	m.observe(key, Outcome{Drifted: unknownDrift})
	g.Expect(testutil.ToFloat64(m.drifted.WithLabelValues("fleet", "cluster"))).To(Equal(3.0), "a gate verdict leaves the gauge alone")
	m.observe(key, Outcome{Drifted: 0})
	g.Expect(testutil.ToFloat64(m.drifted.WithLabelValues("fleet", "cluster"))).To(Equal(0.0))

	m.Correction("rotate", "success")
	m.Correction("rotate", "success")
	m.Correction("", "failure")
	g.Expect(testutil.ToFloat64(m.corrections.WithLabelValues("rotate", "success"))).To(Equal(2.0))
	g.Expect(testutil.CollectAndCount(m.corrections)).To(Equal(1), "no series with an empty strategy")

	m.observe(key, Outcome{Remove: true})
	g.Expect(testutil.CollectAndCount(m.drifted)).To(Equal(0), "an opted-out release has no series")

	var nilMetrics *Metrics
	nilMetrics.Correction("rotate", "success") // a nil Metrics records nothing and does not panic
	nilMetrics.observe(key, Outcome{Drifted: 1})
}
