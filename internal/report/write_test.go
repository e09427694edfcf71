package report

import (
	"context"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/plan"
)

var (
	earlier = metav1.NewTime(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC))
	// ready is helm-controller's condition; this add-on must never touch it.
	ready = metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "InstallSucceeded",
		Message: "Helm install succeeded", ObservedGeneration: 1, LastTransitionTime: earlier}
	released = metav1.Condition{Type: "Released", Status: metav1.ConditionFalse, Reason: "UpgradeFailed",
		Message: "Helm upgrade failed", ObservedGeneration: 2, LastTransitionTime: earlier}
)

const correctedV3 = "Corrected release fleet/cluster-a.v3: Metal3MachineTemplate/workers: corrected in place, rolls machines: no"

// ours builds a TemplatesInSync condition as a previous pass wrote it.
func ours(status metav1.ConditionStatus, reason, msg string, gen int64) metav1.Condition {
	return metav1.Condition{Type: api.TemplatesInSyncCondition, Status: status, Reason: reason,
		Message: msg, ObservedGeneration: gen, LastTransitionTime: earlier}
}

// cond builds a Summary's condition (no generation, no time: Summarize sets neither).
func cond(status metav1.ConditionStatus, reason, msg string) *metav1.Condition {
	return &metav1.Condition{Type: api.TemplatesInSyncCondition, Status: status, Reason: reason, Message: msg}
}

// newHelmRelease is a HelmRelease fleet/cluster-a at generation with the
// given conditions.
func newHelmRelease(generation int64, conditions ...metav1.Condition) *helmv2.HelmRelease {
	hr := &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Name: "cluster-a", Namespace: "fleet", Generation: generation}}
	hr.Status.Conditions = append([]metav1.Condition(nil), conditions...)
	return hr
}

func TestSetCondition(t *testing.T) {
	noDrift := cond(metav1.ConditionTrue, api.NoDriftDetectedReason, "2 templates of release fleet/cluster-a.v3 match the manifest")
	cases := []struct {
		name string // what the case proves
		// current is the HelmRelease's TemplatesInSync condition; nil for none.
		current *metav1.Condition
		// generation is the HelmRelease's metadata.generation.
		generation int64
		// out is the pass's summary.
		out Summary
		// wantChanged is setCondition's answer.
		wantChanged bool
		// want is the TemplatesInSync condition afterwards (LastTransitionTime
		// is checked separately); nil means absent.
		want *metav1.Condition
		// wantTransition is true when LastTransitionTime must move.
		wantTransition bool
	}{{
		name:           "first condition is added with the HelmRelease generation",
		generation:     5,
		out:            Summary{Condition: noDrift},
		wantChanged:    true,
		want:           &metav1.Condition{Type: api.TemplatesInSyncCondition, Status: metav1.ConditionTrue, Reason: api.NoDriftDetectedReason, Message: noDrift.Message, ObservedGeneration: 5},
		wantTransition: true,
	}, {
		name:        "same condition, same generation: no change",
		current:     ptr(ours(metav1.ConditionTrue, api.NoDriftDetectedReason, noDrift.Message, 5)),
		generation:  5,
		out:         Summary{Condition: noDrift},
		wantChanged: false,
		want:        ptr(ours(metav1.ConditionTrue, api.NoDriftDetectedReason, noDrift.Message, 5)),
	}, {
		name:        "same condition, new generation: ObservedGeneration follows, no transition",
		current:     ptr(ours(metav1.ConditionTrue, api.NoDriftDetectedReason, noDrift.Message, 5)),
		generation:  6,
		out:         Summary{Condition: noDrift},
		wantChanged: true,
		want:        ptr(ours(metav1.ConditionTrue, api.NoDriftDetectedReason, noDrift.Message, 6)),
	}, {
		name:        "message change with the same status: updated, no transition",
		current:     ptr(ours(metav1.ConditionFalse, api.DriftDetectedReason, "Drift in release fleet/cluster-a.v3: a", 5)),
		generation:  5,
		out:         Summary{Condition: cond(metav1.ConditionFalse, api.DriftDetectedReason, "Drift in release fleet/cluster-a.v3: b")},
		wantChanged: true,
		want:        ptr(ours(metav1.ConditionFalse, api.DriftDetectedReason, "Drift in release fleet/cluster-a.v3: b", 5)),
	}, {
		name:        "the same DriftCorrected condition again (a quiet pass after the correction): no change",
		current:     ptr(ours(metav1.ConditionTrue, api.DriftCorrectedReason, correctedV3, 5)),
		generation:  5,
		out:         Summary{Condition: cond(metav1.ConditionTrue, api.DriftCorrectedReason, correctedV3)},
		wantChanged: false,
		want:        ptr(ours(metav1.ConditionTrue, api.DriftCorrectedReason, correctedV3, 5)),
	}, {
		name:        "DriftCorrected is not kept over a NoDrift pass (a new release): replaced, no transition",
		current:     ptr(ours(metav1.ConditionTrue, api.DriftCorrectedReason, correctedV3, 5)),
		generation:  5,
		out:         Summary{Condition: cond(metav1.ConditionTrue, api.NoDriftDetectedReason, "1 templates of release fleet/cluster-a.v4 match the manifest")},
		wantChanged: true,
		want:        ptr(ours(metav1.ConditionTrue, api.NoDriftDetectedReason, "1 templates of release fleet/cluster-a.v4 match the manifest", 5)),
	}, {
		name:       "DriftCorrected replaced by new drift",
		current:    ptr(ours(metav1.ConditionTrue, api.DriftCorrectedReason, correctedV3, 5)),
		generation: 5,
		out: Summary{Condition: cond(metav1.ConditionFalse, api.DriftDetectedReason, "Drift in release fleet/cluster-a.v3: x"),
			Conclusion: plan.Conclusion{Drifted: 1}},
		wantChanged:    true,
		want:           ptr(ours(metav1.ConditionFalse, api.DriftDetectedReason, "Drift in release fleet/cluster-a.v3: x", 5)),
		wantTransition: true,
	}, {
		name:           "DriftCorrected replaced by a gate verdict",
		current:        ptr(ours(metav1.ConditionTrue, api.DriftCorrectedReason, correctedV3, 5)),
		generation:     5,
		out:            Summary{Condition: cond(metav1.ConditionUnknown, api.ClusterPausedReason, "waiting: Cluster fleet/a is paused")},
		wantChanged:    true,
		want:           ptr(ours(metav1.ConditionUnknown, api.ClusterPausedReason, "waiting: Cluster fleet/a is paused", 5)),
		wantTransition: true,
	}, {
		name:        "nil condition without Remove leaves it untouched (silent verdict)",
		current:     ptr(ours(metav1.ConditionFalse, api.DriftDetectedReason, "x", 5)),
		generation:  9,
		out:         Summary{},
		wantChanged: false,
		want:        ptr(ours(metav1.ConditionFalse, api.DriftDetectedReason, "x", 5)),
	}, {
		name:        "Remove removes the condition",
		current:     ptr(ours(metav1.ConditionTrue, api.DriftCorrectedReason, correctedV3, 5)),
		generation:  5,
		out:         Summary{Remove: true},
		wantChanged: true,
	}, {
		name:        "Remove with nothing to remove: no change",
		generation:  5,
		out:         Summary{Remove: true},
		wantChanged: false,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			conditions := []metav1.Condition{ready}
			if tc.current != nil {
				conditions = append(conditions, *tc.current)
			}
			hr := newHelmRelease(tc.generation, append(conditions, released)...)
			outBefore := deepCopySummary(tc.out)

			changed := setCondition(hr, tc.out)

			g.Expect(changed).To(Equal(tc.wantChanged))
			g.Expect(tc.out).To(Equal(outBefore), "the summary must not be mutated")
			g.Expect(apimeta.FindStatusCondition(hr.Status.Conditions, "Ready")).To(Equal(&ready), "foreign conditions are never modified")
			g.Expect(apimeta.FindStatusCondition(hr.Status.Conditions, "Released")).To(Equal(&released), "foreign conditions are never modified")

			got := apimeta.FindStatusCondition(hr.Status.Conditions, api.TemplatesInSyncCondition)
			if tc.want == nil {
				g.Expect(got).To(BeNil())
				g.Expect(hr.Status.Conditions).To(Equal([]metav1.Condition{ready, released}))
				return
			}
			g.Expect(got).NotTo(BeNil())
			g.Expect(hr.Status.Conditions).To(HaveLen(3))
			gotNoTime, wantNoTime := *got, *tc.want
			gotNoTime.LastTransitionTime, wantNoTime.LastTransitionTime = metav1.Time{}, metav1.Time{}
			g.Expect(gotNoTime).To(Equal(wantNoTime))
			if tc.wantTransition {
				g.Expect(got.LastTransitionTime.Time).To(BeTemporally("~", time.Now(), time.Minute))
			} else {
				g.Expect(got.LastTransitionTime).To(Equal(earlier))
			}
		})
	}
}

// TestSetConditionTwice: writing the same summary again is a no-op, so a
// steady state makes no status write and emits no event.
func TestSetConditionTwice(t *testing.T) {
	summaries := []struct {
		name string  // what the summary is
		out  Summary // the summary written twice
	}{
		{name: "no drift", out: Summary{Condition: cond(metav1.ConditionTrue, api.NoDriftDetectedReason, "1 templates of release fleet/cluster-a.v3 match the manifest")}},
		{name: "drift", out: Summary{Condition: cond(metav1.ConditionFalse, api.DriftDetectedReason, "Drift in release fleet/cluster-a.v3: x"), Conclusion: plan.Conclusion{Drifted: 1}}},
		{name: "correction", out: Summary{Condition: cond(metav1.ConditionTrue, api.DriftCorrectedReason, correctedV3)}},
		{name: "gate verdict", out: Summary{Condition: cond(metav1.ConditionUnknown, api.ClusterPausedReason, "waiting")}},
		{name: "remove", out: Summary{Remove: true}},
	}
	for _, tc := range summaries {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			hr := newHelmRelease(3, ready, ours(metav1.ConditionFalse, api.DriftDetectedReason, "older", 2))
			g.Expect(setCondition(hr, tc.out)).To(BeTrue(), "first write changes")
			after := append([]metav1.Condition(nil), hr.Status.Conditions...)
			g.Expect(setCondition(hr, tc.out)).To(BeFalse(), "second write changes nothing")
			g.Expect(hr.Status.Conditions).To(Equal(after))
			g.Expect(apimeta.FindStatusCondition(hr.Status.Conditions, "Ready")).To(Equal(&ready))
		})
	}
}

// TestWriteCorrectionThenQuietPass runs Writer.Write against a fake API:
// the pass that corrects sets the condition and emits its event with the
// changed field; the quiet pass after it (the same condition, read from
// the world) writes no status and emits nothing; a new drift then changes
// the condition and emits its event. The counter counts the one correction.
func TestWriteCorrectionThenQuietPass(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	scheme := runtime.NewScheme()
	g.Expect(helmv2.AddToScheme(scheme)).To(Succeed())
	hr := newHelmRelease(2, ready)
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(hr).WithStatusSubresource(&helmv2.HelmRelease{}).Build()
	rec := &events.FakeRecorder{Events: make(chan string, 10)}
	reg := prometheus.NewRegistry()
	w := &Writer{Client: c, Events: rec, Metrics: NewMetrics(reg)}
	key := client.ObjectKeyFromObject(hr)

	// get returns the condition on the stored HelmRelease and its resourceVersion.
	get := func() (*metav1.Condition, string) {
		stored := &helmv2.HelmRelease{}
		g.Expect(c.Get(ctx, key, stored)).To(Succeed())
		foreign := apimeta.FindStatusCondition(stored.Status.Conditions, "Ready")
		g.Expect(foreign).NotTo(BeNil())
		g.Expect(foreign.LastTransitionTime.Equal(&ready.LastTransitionTime)).To(BeTrue(), "helm-controller's condition is never touched")
		foreign.LastTransitionTime = ready.LastTransitionTime // the round trip drops the time zone
		g.Expect(*foreign).To(Equal(ready))
		return apimeta.FindStatusCondition(stored.Status.Conditions, api.TemplatesInSyncCondition), stored.ResourceVersion
	}
	// drain returns the events recorded since the last call.
	drain := func() []string {
		var out []string
		for {
			select {
			case e := <-rec.Events:
				out = append(out, e)
			default:
				return out
			}
		}
	}

	correcting := result(plan.ModeEnabled, 1, tmpl("workers", plan.OutcomeDrifted, both(inPlace, func(t *plan.TemplatePlan) {
		t.Writes = []plan.Write{plan.WritePatch}
	})))
	changed, err := w.Write(ctx, key, Summarize(correcting))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changed).To(BeTrue())
	got, rv := get()
	g.Expect(got).NotTo(BeNil())
	g.Expect(got.Reason).To(Equal(api.DriftCorrectedReason))
	g.Expect(got.Message).To(Equal(correctedV3))
	g.Expect(got.ObservedGeneration).To(Equal(int64(2)))
	g.Expect(drain()).To(Equal([]string{corev1.EventTypeNormal + " " + api.TemplateDriftCorrectedEvent + " " + correctedV3 + " [" + imageText + "]"}))

	quiet := result(plan.ModeEnabled, 0, tmpl("workers", plan.OutcomeCorrected, inPlace))
	for range 2 {
		changed, err = w.Write(ctx, key, Summarize(quiet))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(changed).To(BeFalse())
		again, rvAgain := get()
		g.Expect(again).To(Equal(got))
		g.Expect(rvAgain).To(Equal(rv), "a quiet pass writes no status")
		g.Expect(drain()).To(BeEmpty(), "a quiet pass emits no event")
	}

	drifted := result(plan.ModeWarn, 0, tmpl("workers", plan.OutcomeDrifted, inPlace))
	changed, err = w.Write(ctx, key, Summarize(drifted))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changed).To(BeTrue())
	got, _ = get()
	g.Expect(got.Reason).To(Equal(api.DriftDetectedReason))
	g.Expect(drain()).To(Equal([]string{corev1.EventTypeWarning + " " + api.TemplateDriftDetectedEvent + " " + got.Message}))

	g.Expect(testutil.ToFloat64(w.Metrics.corrections.WithLabelValues(m3mtKind.Kind, string(plan.StrategyInPlace), "success"))).To(Equal(1.0))
	g.Expect(testutil.CollectAndCount(w.Metrics.corrections)).To(Equal(1))
	g.Expect(testutil.ToFloat64(w.Metrics.drifted.WithLabelValues("fleet", "cluster-a"))).To(Equal(1.0))
	g.Expect(testutil.ToFloat64(w.Metrics.condition.WithLabelValues("fleet", "cluster-a", "False", api.DriftDetectedReason))).To(Equal(1.0))
	g.Expect(testutil.CollectAndCount(w.Metrics.condition)).To(Equal(1), "the written condition's series only")
}

func ptr[T any](v T) *T { return &v }

func deepCopySummary(o Summary) Summary {
	c := o
	if o.Condition != nil {
		c.Condition = o.Condition.DeepCopy()
	}
	c.Events = append([]Event(nil), o.Events...)
	c.Conclusion.Corrections = append([]plan.Correction(nil), o.Conclusion.Corrections...)
	return c
}

// TestPruneNoteIsNotSignificant: the pass that deletes unused replacements
// names them in the condition, and the next pass no longer does. Neither
// change re-emits the condition's drift events: the TemplatePruned event
// told it. Any other change of the message still does.
func TestPruneNoteIsNotSignificant(t *testing.T) {
	g := NewWithT(t)
	hr := &helmv2.HelmRelease{}
	cond := func(msg string) Summary {
		return Summary{Condition: &metav1.Condition{Type: api.TemplatesInSyncCondition, Status: metav1.ConditionTrue,
			Reason: api.DriftCorrectedReason, Message: msg}}
	}
	const base = "Corrected release fleet/cluster.v2: Metal3MachineTemplate/workers: rotated to workers-0123456789, rolls machines: yes"
	changed, significant := applyCondition(hr, cond(base))
	g.Expect(changed).To(BeTrue())
	g.Expect(significant).To(BeTrue(), "the first condition")
	changed, significant = applyCondition(hr, cond(base+pruneNote+"Metal3MachineTemplate fleet/workers-aaaaaaaaaa"))
	g.Expect(changed).To(BeTrue())
	g.Expect(significant).To(BeFalse(), "the clean-up note appears")
	changed, significant = applyCondition(hr, cond(base))
	g.Expect(changed).To(BeTrue())
	g.Expect(significant).To(BeFalse(), "the clean-up note goes")
	changed, significant = applyCondition(hr, cond(base+"; KubeadmConfigTemplate/workers: corrected in place, rolls machines: no"))
	g.Expect(changed).To(BeTrue())
	g.Expect(significant).To(BeTrue(), "a new correction")
}
