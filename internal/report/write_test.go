package report

import (
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	. "github.com/onsi/gomega"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/apply"
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

const correctedV3 = "Corrected release fleet/cluster-a.v3: Metal3MachineTemplate/workers: in-place, rolls machines: no [/spec/x: 1 → 2]"

// ours builds a TemplatesInSync condition as a previous pass wrote it.
func ours(status metav1.ConditionStatus, reason, msg string, gen int64) metav1.Condition {
	return metav1.Condition{Type: api.TemplatesInSyncCondition, Status: status, Reason: reason,
		Message: msg, ObservedGeneration: gen, LastTransitionTime: earlier}
}

// cond builds an Outcome's condition (no generation, no time: Summarize sets neither).
func cond(status metav1.ConditionStatus, reason, msg string) *metav1.Condition {
	return &metav1.Condition{Type: api.TemplatesInSyncCondition, Status: status, Reason: reason, Message: msg}
}

func TestSetCondition(t *testing.T) {
	noDrift := cond(metav1.ConditionTrue, api.NoDriftDetectedReason, "2 templates of release fleet/cluster-a.v3 match the manifest")
	cases := []struct {
		name string // what the case proves
		// current is the HelmRelease's TemplatesInSync condition; nil for none.
		current *metav1.Condition
		// generation is the HelmRelease's metadata.generation.
		generation int64
		// out is the pass's outcome.
		out Outcome
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
		out:            Outcome{Condition: noDrift, ReleaseRef: "fleet/cluster-a.v3"},
		wantChanged:    true,
		want:           &metav1.Condition{Type: api.TemplatesInSyncCondition, Status: metav1.ConditionTrue, Reason: api.NoDriftDetectedReason, Message: noDrift.Message, ObservedGeneration: 5},
		wantTransition: true,
	}, {
		name:        "same condition, same generation: no change",
		current:     ptr(ours(metav1.ConditionTrue, api.NoDriftDetectedReason, noDrift.Message, 5)),
		generation:  5,
		out:         Outcome{Condition: noDrift, ReleaseRef: "fleet/cluster-a.v3"},
		wantChanged: false,
		want:        ptr(ours(metav1.ConditionTrue, api.NoDriftDetectedReason, noDrift.Message, 5)),
	}, {
		name:        "same condition, new generation: ObservedGeneration follows, no transition",
		current:     ptr(ours(metav1.ConditionTrue, api.NoDriftDetectedReason, noDrift.Message, 5)),
		generation:  6,
		out:         Outcome{Condition: noDrift, ReleaseRef: "fleet/cluster-a.v3"},
		wantChanged: true,
		want:        ptr(ours(metav1.ConditionTrue, api.NoDriftDetectedReason, noDrift.Message, 6)),
	}, {
		name:        "message change with the same status: updated, no transition",
		current:     ptr(ours(metav1.ConditionFalse, api.DriftDetectedReason, "Drift in release fleet/cluster-a.v3: a", 5)),
		generation:  5,
		out:         Outcome{Condition: cond(metav1.ConditionFalse, api.DriftDetectedReason, "Drift in release fleet/cluster-a.v3: b"), ReleaseRef: "fleet/cluster-a.v3"},
		wantChanged: true,
		want:        ptr(ours(metav1.ConditionFalse, api.DriftDetectedReason, "Drift in release fleet/cluster-a.v3: b", 5)),
	}, {
		name:        "DriftCorrected kept on a quiet NoDrift pass of the same release",
		current:     ptr(ours(metav1.ConditionTrue, api.DriftCorrectedReason, correctedV3, 5)),
		generation:  5,
		out:         Outcome{Condition: noDrift, ReleaseRef: "fleet/cluster-a.v3"},
		wantChanged: false,
		want:        ptr(ours(metav1.ConditionTrue, api.DriftCorrectedReason, correctedV3, 5)),
	}, {
		name:       "DriftCorrected kept on a quiet DriftCorrected pass of the same release (steady rotation)",
		current:    ptr(ours(metav1.ConditionTrue, api.DriftCorrectedReason, correctedV3, 5)),
		generation: 5,
		out: Outcome{Condition: cond(metav1.ConditionTrue, api.DriftCorrectedReason,
			"Corrected release fleet/cluster-a.v3: Metal3MachineTemplate/workers: rotate to w-1, rolls machines: yes [/spec/x: 1 → 2]"),
			ReleaseRef: "fleet/cluster-a.v3"},
		wantChanged: false,
		want:        ptr(ours(metav1.ConditionTrue, api.DriftCorrectedReason, correctedV3, 5)),
	}, {
		name:        "DriftCorrected replaced when the release differs",
		current:     ptr(ours(metav1.ConditionTrue, api.DriftCorrectedReason, correctedV3, 5)),
		generation:  5,
		out:         Outcome{Condition: cond(metav1.ConditionTrue, api.NoDriftDetectedReason, "1 templates of release fleet/cluster-a.v4 match the manifest"), ReleaseRef: "fleet/cluster-a.v4"},
		wantChanged: true,
		want:        ptr(ours(metav1.ConditionTrue, api.NoDriftDetectedReason, "1 templates of release fleet/cluster-a.v4 match the manifest", 5)),
	}, {
		name:        "DriftCorrected replaced for a release whose ref only shares a prefix (v30 vs v3)",
		current:     ptr(ours(metav1.ConditionTrue, api.DriftCorrectedReason, correctedV3, 5)),
		generation:  5,
		out:         Outcome{Condition: cond(metav1.ConditionTrue, api.NoDriftDetectedReason, "1 templates of release fleet/cluster-a.v30 match the manifest"), ReleaseRef: "fleet/cluster-a.v30"},
		wantChanged: true,
		want:        ptr(ours(metav1.ConditionTrue, api.NoDriftDetectedReason, "1 templates of release fleet/cluster-a.v30 match the manifest", 5)),
	}, {
		name:        "DriftCorrected of a release whose ref extends this one's (v30 vs v3) is replaced",
		current:     ptr(ours(metav1.ConditionTrue, api.DriftCorrectedReason, "Corrected release fleet/cluster-a.v30: x", 5)),
		generation:  5,
		out:         Outcome{Condition: noDrift, ReleaseRef: "fleet/cluster-a.v3"},
		wantChanged: true,
		want:        ptr(ours(metav1.ConditionTrue, api.NoDriftDetectedReason, noDrift.Message, 5)),
	}, {
		name:       "DriftCorrected replaced when the pass wrote",
		current:    ptr(ours(metav1.ConditionTrue, api.DriftCorrectedReason, correctedV3, 5)),
		generation: 5,
		out: Outcome{Condition: cond(metav1.ConditionTrue, api.DriftCorrectedReason, "Corrected release fleet/cluster-a.v3: other"),
			Wrote: true, ReleaseRef: "fleet/cluster-a.v3"},
		wantChanged: true,
		want:        ptr(ours(metav1.ConditionTrue, api.DriftCorrectedReason, "Corrected release fleet/cluster-a.v3: other", 5)),
	}, {
		name:       "DriftCorrected replaced by new drift of the same release",
		current:    ptr(ours(metav1.ConditionTrue, api.DriftCorrectedReason, correctedV3, 5)),
		generation: 5,
		out: Outcome{Condition: cond(metav1.ConditionFalse, api.DriftDetectedReason, "Drift in release fleet/cluster-a.v3: x"),
			ReleaseRef: "fleet/cluster-a.v3"},
		wantChanged:    true,
		want:           ptr(ours(metav1.ConditionFalse, api.DriftDetectedReason, "Drift in release fleet/cluster-a.v3: x", 5)),
		wantTransition: true,
	}, {
		name:       "DriftCorrected replaced by a gate verdict",
		current:    ptr(ours(metav1.ConditionTrue, api.DriftCorrectedReason, correctedV3, 5)),
		generation: 5,
		out: Outcome{Condition: cond(metav1.ConditionUnknown, api.ClusterPausedReason, "waiting: Cluster fleet/a is paused"),
			ReleaseRef: "fleet/cluster-a.v3"},
		wantChanged:    true,
		want:           ptr(ours(metav1.ConditionUnknown, api.ClusterPausedReason, "waiting: Cluster fleet/a is paused", 5)),
		wantTransition: true,
	}, {
		name:        "NoDriftDetected is not kept like DriftCorrected",
		current:     ptr(ours(metav1.ConditionTrue, api.NoDriftDetectedReason, "Corrected release fleet/cluster-a.v3: fake", 5)),
		generation:  5,
		out:         Outcome{Condition: noDrift, ReleaseRef: "fleet/cluster-a.v3"},
		wantChanged: true,
		want:        ptr(ours(metav1.ConditionTrue, api.NoDriftDetectedReason, noDrift.Message, 5)),
	}, {
		name:        "nil condition without Remove leaves it untouched (silent verdict)",
		current:     ptr(ours(metav1.ConditionFalse, api.DriftDetectedReason, "x", 5)),
		generation:  9,
		out:         Outcome{},
		wantChanged: false,
		want:        ptr(ours(metav1.ConditionFalse, api.DriftDetectedReason, "x", 5)),
	}, {
		name:        "Remove removes the condition",
		current:     ptr(ours(metav1.ConditionTrue, api.DriftCorrectedReason, correctedV3, 5)),
		generation:  5,
		out:         Outcome{Remove: true},
		wantChanged: true,
	}, {
		name:        "Remove with nothing to remove: no change",
		generation:  5,
		out:         Outcome{Remove: true},
		wantChanged: false,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			hr := &helmv2.HelmRelease{}
			hr.Generation = tc.generation
			hr.Status.Conditions = []metav1.Condition{ready}
			if tc.current != nil {
				hr.Status.Conditions = append(hr.Status.Conditions, *tc.current)
			}
			hr.Status.Conditions = append(hr.Status.Conditions, released)
			outBefore := deepCopyOutcome(tc.out)

			changed := setCondition(hr, tc.out)

			g.Expect(changed).To(Equal(tc.wantChanged))
			g.Expect(tc.out).To(Equal(outBefore), "the outcome must not be mutated")
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

// TestSetConditionTwice: writing the same outcome again is a no-op, so a
// steady state makes no status write and emits no event.
func TestSetConditionTwice(t *testing.T) {
	outcomes := []struct {
		name string  // what the outcome is
		out  Outcome // the outcome written twice
	}{
		{name: "no drift", out: Outcome{Condition: cond(metav1.ConditionTrue, api.NoDriftDetectedReason, "1 templates of release fleet/cluster-a.v3 match the manifest"), ReleaseRef: "fleet/cluster-a.v3"}},
		{name: "drift", out: Outcome{Condition: cond(metav1.ConditionFalse, api.DriftDetectedReason, "Drift in release fleet/cluster-a.v3: x"), Drifted: 1, ReleaseRef: "fleet/cluster-a.v3"}},
		{name: "correction that wrote", out: Outcome{Condition: cond(metav1.ConditionTrue, api.DriftCorrectedReason, correctedV3), Wrote: true, ReleaseRef: "fleet/cluster-a.v3"}},
		{name: "gate verdict", out: Outcome{Condition: cond(metav1.ConditionUnknown, api.ClusterPausedReason, "waiting")}},
		{name: "remove", out: Outcome{Remove: true}},
	}
	for _, tc := range outcomes {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			hr := &helmv2.HelmRelease{}
			hr.Generation = 3
			hr.Status.Conditions = []metav1.Condition{ready, ours(metav1.ConditionFalse, api.DriftDetectedReason, "older", 2)}
			g.Expect(setCondition(hr, tc.out)).To(BeTrue(), "first write changes")
			after := append([]metav1.Condition(nil), hr.Status.Conditions...)
			g.Expect(setCondition(hr, tc.out)).To(BeFalse(), "second write changes nothing")
			g.Expect(hr.Status.Conditions).To(Equal(after))
			g.Expect(apimeta.FindStatusCondition(hr.Status.Conditions, "Ready")).To(Equal(&ready))
		})
	}
}

func TestKeepCorrected(t *testing.T) {
	cases := []struct {
		name    string            // what the case proves
		current *metav1.Condition // the condition on the HelmRelease
		out     Outcome           // the pass's outcome
		want    bool              // the current condition is kept
	}{
		{name: "no current condition", out: Outcome{Condition: cond(metav1.ConditionTrue, api.NoDriftDetectedReason, "m"), ReleaseRef: "fleet/cluster-a.v3"}},
		{
			name:    "quiet no-drift pass, same release",
			current: ptr(ours(metav1.ConditionTrue, api.DriftCorrectedReason, correctedV3, 1)),
			out:     Outcome{Condition: cond(metav1.ConditionTrue, api.NoDriftDetectedReason, "m"), ReleaseRef: "fleet/cluster-a.v3"},
			want:    true,
		},
		{
			name:    "quiet pass, other release",
			current: ptr(ours(metav1.ConditionTrue, api.DriftCorrectedReason, correctedV3, 1)),
			out:     Outcome{Condition: cond(metav1.ConditionTrue, api.NoDriftDetectedReason, "m"), ReleaseRef: "fleet/cluster-b.v3"},
		},
		{
			name:    "pass that wrote",
			current: ptr(ours(metav1.ConditionTrue, api.DriftCorrectedReason, correctedV3, 1)),
			out:     Outcome{Condition: cond(metav1.ConditionTrue, api.NoDriftDetectedReason, "m"), ReleaseRef: "fleet/cluster-a.v3", Wrote: true},
		},
		{
			name:    "failed correction is never hidden",
			current: ptr(ours(metav1.ConditionTrue, api.DriftCorrectedReason, correctedV3, 1)),
			out:     Outcome{Condition: cond(metav1.ConditionFalse, api.CorrectionFailedReason, "m"), ReleaseRef: "fleet/cluster-a.v3"},
		},
		{
			name:    "current is not DriftCorrected",
			current: ptr(ours(metav1.ConditionFalse, api.DriftDetectedReason, correctedV3, 1)),
			out:     Outcome{Condition: cond(metav1.ConditionTrue, api.NoDriftDetectedReason, "m"), ReleaseRef: "fleet/cluster-a.v3"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			NewWithT(t).Expect(keepCorrected(tc.current, tc.out)).To(Equal(tc.want))
		})
	}
}

// TestSummarizeThenSetCondition ties both halves: the quiet pass after a
// correction keeps the correction on the HelmRelease.
func TestSummarizeThenSetCondition(t *testing.T) {
	g := NewWithT(t)
	hr := &helmv2.HelmRelease{}
	hr.Generation = 2
	hr.Status.Conditions = []metav1.Condition{ready}

	corrected := Summarize(result(plan.ModeEnabled, 1, tmpl("workers", plan.StateDrifted, func(t *apply.TemplateResult) { t.Strategy = plan.StrategyInPlace })))
	g.Expect(setCondition(hr, corrected)).To(BeTrue())
	quiet := Summarize(result(plan.ModeEnabled, 0, tmpl("workers", plan.StateInSync, nil)))
	g.Expect(quiet.Condition.Reason).To(Equal(api.NoDriftDetectedReason))
	g.Expect(setCondition(hr, quiet)).To(BeFalse())
	got := apimeta.FindStatusCondition(hr.Status.Conditions, api.TemplatesInSyncCondition)
	g.Expect(got.Reason).To(Equal(api.DriftCorrectedReason))
	g.Expect(got.Message).To(Equal(corrected.Condition.Message))
	g.Expect(got.ObservedGeneration).To(Equal(int64(2)))
	g.Expect(apimeta.FindStatusCondition(hr.Status.Conditions, "Ready")).To(Equal(&ready))
}

func ptr[T any](v T) *T { return &v }

func deepCopyOutcome(o Outcome) Outcome {
	c := o
	if o.Condition != nil {
		c.Condition = o.Condition.DeepCopy()
	}
	c.Events = append([]Event(nil), o.Events...)
	return c
}

// TestKeptConditionFollowsGeneration: a DriftCorrected condition kept on a
// quiet pass still records the generation that pass looked at.
func TestKeptConditionFollowsGeneration(t *testing.T) {
	g := NewWithT(t)
	hr := &helmv2.HelmRelease{}
	hr.Generation = 6
	hr.Status.Conditions = []metav1.Condition{ours(metav1.ConditionTrue, api.DriftCorrectedReason, correctedV3, 5)}
	out := Outcome{Condition: cond(metav1.ConditionTrue, api.NoDriftDetectedReason, "m"), ReleaseRef: "fleet/cluster-a.v3"}
	g.Expect(setCondition(hr, out)).To(BeTrue())
	g.Expect(hr.Status.Conditions).To(HaveLen(1))
	g.Expect(hr.Status.Conditions[0].Reason).To(Equal(api.DriftCorrectedReason))
	g.Expect(hr.Status.Conditions[0].Message).To(Equal(correctedV3))
	g.Expect(hr.Status.Conditions[0].ObservedGeneration).To(Equal(int64(6)))
	g.Expect(setCondition(hr, out)).To(BeFalse(), "nothing left to change")
}
