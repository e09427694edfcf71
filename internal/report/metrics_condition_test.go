package report

import (
	"fmt"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/plan"
)

// TestMetricsCondition: the condition gauge holds one series per release,
// its current status and reason; a gate's verdict replaces it, a suspended
// release keeps it, an opted-out or deleted release loses it.
func TestMetricsCondition(t *testing.T) {
	key := client.ObjectKey{Namespace: "fleet", Name: "cluster"}
	other := client.ObjectKey{Namespace: "fleet", Name: "other"}
	blocked := plan.Conclusion{Status: metav1.ConditionFalse, Reason: api.CorrectionBlockedReason, Drifted: 1}
	cases := []struct {
		// name says what the case proves.
		name string
		// passes are the conclusions of key's passes, in order.
		passes []plan.Conclusion
		// forget deletes key after the passes, as a deleted HelmRelease does.
		forget bool
		// want is key's exposition: "" for no series.
		want string
	}{{
		name:   "a pass sets its status and reason",
		passes: []plan.Conclusion{blocked},
		want:   `{name="cluster",namespace="fleet",reason="CorrectionBlocked",status="False"} 1`,
	}, {
		name: "a new reason replaces the old series",
		passes: []plan.Conclusion{blocked,
			{Status: metav1.ConditionTrue, Reason: api.DriftCorrectedReason, Drifted: 0}},
		want: `{name="cluster",namespace="fleet",reason="DriftCorrected",status="True"} 1`,
	}, {
		name: "a gate's verdict replaces it too",
		passes: []plan.Conclusion{blocked,
			{Status: metav1.ConditionUnknown, Reason: api.ClusterPausedReason, Drifted: plan.UnknownDrift}},
		want: `{name="cluster",namespace="fleet",reason="ClusterPaused",status="Unknown"} 1`,
	}, {
		name:   "the same status and reason again keep one series",
		passes: []plan.Conclusion{blocked, blocked},
		want:   `{name="cluster",namespace="fleet",reason="CorrectionBlocked",status="False"} 1`,
	}, {
		name: "back to an earlier reason",
		passes: []plan.Conclusion{blocked,
			{Status: metav1.ConditionTrue, Reason: api.DriftCorrectedReason}, blocked},
		want: `{name="cluster",namespace="fleet",reason="CorrectionBlocked",status="False"} 1`,
	}, {
		name:   "a suspended release keeps its series",
		passes: []plan.Conclusion{blocked, {Silent: true, Drifted: plan.UnknownDrift}},
		want:   `{name="cluster",namespace="fleet",reason="CorrectionBlocked",status="False"} 1`,
	}, {
		name:   "an opted-out release has none",
		passes: []plan.Conclusion{blocked, {Remove: true, Drifted: plan.UnknownDrift}},
	}, {
		name:   "a deleted release has none",
		passes: []plan.Conclusion{blocked},
		forget: true,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			m := NewMetrics(prometheus.NewRegistry())
			m.observe(other, plan.Conclusion{Status: metav1.ConditionTrue, Reason: api.NoDriftDetectedReason})
			for _, c := range tc.passes {
				m.observe(key, c)
			}
			if tc.forget {
				m.Forget(key)
			}
			want := []string{`{name="other",namespace="fleet",reason="NoDriftDetected",status="True"} 1`}
			if tc.want != "" {
				want = append(want, tc.want)
			}
			g.Expect(series(t, m.condition)).To(ConsistOf(want))
		})
	}
}

// TestMetricsInitKinds: every template kind's counters exist at zero
// before anything happened to it, for every strategy and result.
func TestMetricsInitKinds(t *testing.T) {
	g := NewWithT(t)
	m := NewMetrics(prometheus.NewRegistry())
	m.InitKinds([]string{"Metal3MachineTemplate", "KubeadmConfigTemplate"})
	g.Expect(testutil.CollectAndCount(m.pruned)).To(Equal(2))
	g.Expect(testutil.CollectAndCount(m.corrections)).To(Equal(2*3*2), "kinds × strategies × results")
	g.Expect(testutil.ToFloat64(m.corrections.WithLabelValues("KubeadmConfigTemplate", "recreate", "failure"))).To(Equal(0.0))
	g.Expect(testutil.ToFloat64(m.pruned.WithLabelValues("Metal3MachineTemplate"))).To(Equal(0.0))
}

// TestMetricsDuration: the histogram is labelled as Flux's
// gotk_reconcile_duration_seconds, and its buckets go from 10 ms to at
// least 10 minutes.
func TestMetricsDuration(t *testing.T) {
	g := NewWithT(t)
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	m.Duration(client.ObjectKey{Namespace: "fleet", Name: "cluster"}, time.Now().Add(-12*time.Minute))

	families, err := reg.Gather()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(families).To(HaveLen(1))
	f := families[0]
	g.Expect(f.GetName()).To(Equal(DurationMetric))
	labels := map[string]string{}
	for _, l := range f.GetMetric()[0].GetLabel() {
		labels[l.GetName()] = l.GetValue()
	}
	g.Expect(labels).To(Equal(map[string]string{"kind": "HelmRelease", "namespace": "fleet", "name": "cluster"}))
	buckets := f.GetMetric()[0].GetHistogram().GetBucket()
	g.Expect(buckets[0].GetUpperBound()).To(BeNumerically("~", 0.01, 1e-9))
	g.Expect(buckets[len(buckets)-1].GetUpperBound()).To(BeNumerically(">=", 600))
	var under int
	for _, b := range buckets {
		if b.GetUpperBound() >= 12*60 && b.GetCumulativeCount() == 1 {
			under++
		}
	}
	g.Expect(under).To(BeNumerically(">", 0), "a 12-minute pass lands in a bucket, not only in +Inf")
}

// series renders the series of c as `{label="value",...} value`, labels
// sorted by name.
func series(t *testing.T, c prometheus.Collector) []string {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(c); err != nil {
		t.Fatal(err)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range families {
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			out = append(out, fmt.Sprintf("{%s} %g", strings.Join(labels, ","), m.GetGauge().GetValue()))
		}
	}
	return out
}

// BenchmarkObserveCondition is a pass's condition series set among a
// fleet's: its cost must not grow with the number of releases.
func BenchmarkObserveCondition(b *testing.B) {
	for _, n := range []int{100, 5000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			m := NewMetrics(prometheus.NewRegistry())
			keys := make([]client.ObjectKey, n)
			for i := range keys {
				keys[i] = client.ObjectKey{Namespace: fmt.Sprintf("fleet-%04d", i), Name: "cluster"}
				m.observe(keys[i], plan.Conclusion{Status: metav1.ConditionTrue, Reason: api.NoDriftDetectedReason})
			}
			reasons := []string{api.DriftCorrectedReason, api.NoDriftDetectedReason}
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				m.observe(keys[i%n], plan.Conclusion{Status: metav1.ConditionTrue, Reason: reasons[i%2]})
			}
		})
	}
}
