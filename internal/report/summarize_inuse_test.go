package report

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/pipeline"
	"github.com/templatedrift/template-drift-controller/internal/plan"
)

// blockedMsg is a blocked template's message as plan writes it.
const blockedMsg = "correction blocked: strategy recreate would delete the template, and the delete cannot complete: " +
	"it is in use by MachineDeployment md-0; nothing was deleted. Ways out: give the template a new name in the chart"

// blocked marks a template as blocked: a recreate that cannot complete.
func blocked(t *plan.TemplatePlan) { t.Strategy, t.Message = plan.StrategyRecreate, blockedMsg }

// heldBy makes a template a rotation that the given consumers outside the
// release still hold.
func heldBy(ids ...manifest.ID) func(t *plan.TemplatePlan) {
	return func(t *plan.TemplatePlan) {
		rotated(t)
		t.Rotation.HeldBy = ids
	}
}

// pruned adds the replacements the clean-up deleted to res.
func pruned(res *pipeline.Result, ids ...manifest.ID) *pipeline.Result {
	res.Pruned = ids
	return res
}

func TestSummarizeInUse(t *testing.T) {
	foreignMD := manifest.ID{GroupKind: manifest.MachineDeploymentKind, Namespace: "fleet", Name: "md-other"}
	foreignKCP := manifest.ID{GroupKind: manifest.KubeadmControlPlaneKind, Namespace: "fleet", Name: "cp-other"}
	oldWorkers := manifest.ID{GroupKind: m3mtKind, Namespace: "fleet", Name: "workers-0a1b2c3d4e"}
	oldData := manifest.ID{GroupKind: manifest.Metal3DataTemplateKind, Namespace: "fleet", Name: "workers-data-1111111111"}
	const (
		heldLine = "Metal3MachineTemplate/workers: rotated to " + replacement + " for the release's consumers, rolls machines: yes" +
			"; still in use, with its drift, by MachineDeployment fleet/md-other (not of this release, never repointed)"
		prunedNote  = ". Deleted unused replacements: Metal3MachineTemplate fleet/workers-0a1b2c3d4e, Metal3DataTemplate fleet/workers-data-1111111111"
		prunedEvent = "Deleted unused replacements of release fleet/cluster-a.v3: Metal3MachineTemplate fleet/workers-0a1b2c3d4e, Metal3DataTemplate fleet/workers-data-1111111111"
	)

	cases := []struct {
		name string           // what the case proves
		res  *pipeline.Result // the pass's result
		// want is the whole condition (Type included).
		want metav1.Condition
		// wantEvents are the whole events, in order.
		wantEvents []Event
		// wantDrifted and wantCorrections are the conclusion's.
		wantDrifted     int
		wantCorrections []plan.Strategy
	}{{
		name: "enabled, a blocked template: False/CorrectionBlocked with its message, a Warning TemplateCorrectionBlocked",
		res:  result(plan.ModeEnabled, 0, tmpl("workers", plan.OutcomeBlocked, blocked), tmpl("data", plan.OutcomeInSync, nil)),
		want: metav1.Condition{Type: api.TemplatesInSyncCondition, Status: metav1.ConditionFalse, Reason: api.CorrectionBlockedReason,
			Message: "Correction of release fleet/cluster-a.v3 blocked: Metal3MachineTemplate/workers: " + blockedMsg},
		wantEvents: []Event{{Type: corev1.EventTypeWarning, Reason: api.TemplateCorrectionBlockedEvent,
			Message: "Correction of release fleet/cluster-a.v3 blocked: Metal3MachineTemplate/workers: " + blockedMsg}},
		wantDrifted: 1,
	}, {
		name: "enabled, blocked beside a correction made: still CorrectionBlocked, both lines, the correction counted",
		res: result(plan.ModeEnabled, 1, tmpl("workers", plan.OutcomeBlocked, blocked), tmpl("cp", plan.OutcomeDrifted, func(t *plan.TemplatePlan) {
			inPlace(t)
			t.Writes = []plan.Write{plan.WritePatch}
		})),
		want: metav1.Condition{Type: api.TemplatesInSyncCondition, Status: metav1.ConditionFalse, Reason: api.CorrectionBlockedReason,
			Message: "Correction of release fleet/cluster-a.v3 blocked: Metal3MachineTemplate/workers: " + blockedMsg +
				"; Metal3MachineTemplate/cp: corrected in place, rolls machines: no"},
		wantEvents: []Event{{Type: corev1.EventTypeWarning, Reason: api.TemplateCorrectionBlockedEvent,
			Message: "Correction of release fleet/cluster-a.v3 blocked: Metal3MachineTemplate/workers: " + blockedMsg +
				"; Metal3MachineTemplate/cp: corrected in place, rolls machines: no"},
			// The correction made is told too, as on a pass that ends in sync.
			{Type: corev1.EventTypeNormal, Reason: api.TemplateDriftCorrectedEvent, Always: true,
				Message: "Corrected release fleet/cluster-a.v3: Metal3MachineTemplate/cp: corrected in place, rolls machines: no [/spec/template/spec/image/url: \"http://10.0.0.1/img\" → \"http://10.0.0.2/img\"]"}},
		wantDrifted:     1,
		wantCorrections: []plan.Strategy{plan.StrategyInPlace},
	}, {
		name: "warn, a blocked template: drift, with the same explanation",
		res:  result(plan.ModeWarn, 0, tmpl("workers", plan.OutcomeBlocked, blocked)),
		want: metav1.Condition{Type: api.TemplatesInSyncCondition, Status: metav1.ConditionFalse, Reason: api.DriftDetectedReason,
			Message: "Drift in release fleet/cluster-a.v3: Metal3MachineTemplate/workers: " + blockedMsg},
		wantEvents: []Event{{Type: corev1.EventTypeWarning, Reason: api.TemplateDriftDetectedEvent,
			Message: "Drift in release fleet/cluster-a.v3: Metal3MachineTemplate/workers: " + blockedMsg}},
		wantDrifted: 1,
	}, {
		name: "enabled, failed and blocked: CorrectionFailed wins, listing both",
		res: result(plan.ModeEnabled, 0, tmpl("workers", plan.OutcomeBlocked, blocked),
			tmpl("cp", plan.OutcomeFailed, failed("in-place correction refused: webhook down"))),
		want: metav1.Condition{Type: api.TemplatesInSyncCondition, Status: metav1.ConditionFalse, Reason: api.CorrectionFailedReason,
			Message: "Correction of release fleet/cluster-a.v3 failed: Metal3MachineTemplate/workers: " + blockedMsg +
				"; Metal3MachineTemplate/cp: in-place correction refused: webhook down"},
		wantEvents: []Event{{Type: corev1.EventTypeWarning, Reason: api.TemplateDriftCorrectionFailedEvent,
			Message: "Correction of release fleet/cluster-a.v3 failed: Metal3MachineTemplate/workers: " + blockedMsg +
				"; Metal3MachineTemplate/cp: in-place correction refused: webhook down"}},
		wantDrifted: 2,
	}, {
		name: "enabled, a held rotation: drift, naming who holds the original",
		res:  result(plan.ModeEnabled, 0, tmpl("workers", plan.OutcomeHeld, heldBy(foreignMD))),
		want: metav1.Condition{Type: api.TemplatesInSyncCondition, Status: metav1.ConditionFalse, Reason: api.DriftDetectedReason,
			Message: "Drift in release fleet/cluster-a.v3: " + heldLine},
		wantEvents:  []Event{{Type: corev1.EventTypeWarning, Reason: api.TemplateDriftDetectedEvent, Message: "Drift in release fleet/cluster-a.v3: " + heldLine}},
		wantDrifted: 1,
	}, {
		name: "enabled, the pass that rotates a held template: the same line as the held passes after it, the rotation counted and told",
		res: result(plan.ModeEnabled, 2, tmpl("workers", plan.OutcomeDrifted, func(t *plan.TemplatePlan) {
			heldBy(foreignMD)(t)
			t.Writes = []plan.Write{plan.WriteCreateReplacement}
		})),
		want: metav1.Condition{Type: api.TemplatesInSyncCondition, Status: metav1.ConditionFalse, Reason: api.DriftDetectedReason,
			Message: "Drift in release fleet/cluster-a.v3: " + heldLine},
		wantEvents: []Event{{Type: corev1.EventTypeWarning, Reason: api.TemplateDriftDetectedEvent, Message: "Drift in release fleet/cluster-a.v3: " + heldLine},
			{Type: corev1.EventTypeNormal, Reason: api.TemplateDriftCorrectedEvent, Always: true,
				Message: "Corrected release fleet/cluster-a.v3: " + heldLine + " [/spec/template/spec/image/url: \"http://10.0.0.1/img\" → \"http://10.0.0.2/img\"]"}},
		wantDrifted:     1,
		wantCorrections: []plan.Strategy{plan.StrategyRotate},
	}, {
		name: "enabled, a pass whose only write is a rotation's superseded-by mark: neither counted nor told as a correction (counted when the replacement was made)",
		res: result(plan.ModeEnabled, 1, tmpl("workers", plan.OutcomeDrifted, func(t *plan.TemplatePlan) {
			rotated(t)
			t.Writes = []plan.Write{plan.WriteMarkSuperseded}
		}), tmpl("cp", plan.OutcomeBlocked, blocked)),
		want: metav1.Condition{Type: api.TemplatesInSyncCondition, Status: metav1.ConditionFalse, Reason: api.CorrectionBlockedReason,
			Message: "Correction of release fleet/cluster-a.v3 blocked: Metal3MachineTemplate/workers: rotated to " + replacement +
				", rolls machines: yes; Metal3MachineTemplate/cp: " + blockedMsg},
		wantEvents: []Event{{Type: corev1.EventTypeWarning, Reason: api.TemplateCorrectionBlockedEvent,
			Message: "Correction of release fleet/cluster-a.v3 blocked: Metal3MachineTemplate/workers: rotated to " + replacement +
				", rolls machines: yes; Metal3MachineTemplate/cp: " + blockedMsg}},
		wantDrifted: 1,
	}, {
		name: "several holders are named in the order plan gave",
		res:  result(plan.ModeEnabled, 0, tmpl("workers", plan.OutcomeHeld, heldBy(foreignKCP, foreignMD))),
		want: metav1.Condition{Type: api.TemplatesInSyncCondition, Status: metav1.ConditionFalse, Reason: api.DriftDetectedReason,
			Message: "Drift in release fleet/cluster-a.v3: Metal3MachineTemplate/workers: rotated to " + replacement +
				" for the release's consumers, rolls machines: yes; still in use, with its drift, by KubeadmControlPlane fleet/cp-other, " +
				"MachineDeployment fleet/md-other (not of this release, never repointed)"},
		wantEvents: []Event{{Type: corev1.EventTypeWarning, Reason: api.TemplateDriftDetectedEvent,
			Message: "Drift in release fleet/cluster-a.v3: Metal3MachineTemplate/workers: rotated to " + replacement +
				" for the release's consumers, rolls machines: yes; still in use, with its drift, by KubeadmControlPlane fleet/cp-other, " +
				"MachineDeployment fleet/md-other (not of this release, never repointed)"}},
		wantDrifted: 1,
	}, {
		name: "replacements pruned on a quiet pass: the note ends the condition, an Always Normal TemplatePruned names them",
		res:  pruned(result(plan.ModeEnabled, 0, tmpl("workers", plan.OutcomeInSync, nil)), oldWorkers, oldData),
		want: metav1.Condition{Type: api.TemplatesInSyncCondition, Status: metav1.ConditionTrue, Reason: api.NoDriftDetectedReason,
			Message: "1 templates of release fleet/cluster-a.v3 match the manifest" + prunedNote},
		wantEvents: []Event{{Type: corev1.EventTypeNormal, Reason: api.TemplatePrunedEvent, Message: prunedEvent, Always: true}},
	}, {
		name: "replacements pruned beside a correction: the correction's event first, the prune's after; the note after the skipped ones",
		res: pruned(result(plan.ModeEnabled, 1, tmpl("workers", plan.OutcomeDrifted, inPlace),
			tmpl("opted", plan.OutcomeSkipped, failed("opted out"))), oldWorkers),
		want: metav1.Condition{Type: api.TemplatesInSyncCondition, Status: metav1.ConditionTrue, Reason: api.DriftCorrectedReason,
			Message: "Corrected release fleet/cluster-a.v3: Metal3MachineTemplate/workers: corrected in place, rolls machines: no" +
				". Skipped: Metal3MachineTemplate/opted (opted out). Deleted unused replacements: Metal3MachineTemplate fleet/workers-0a1b2c3d4e"},
		wantEvents: []Event{
			{Type: corev1.EventTypeNormal, Reason: api.TemplateDriftCorrectedEvent, Always: true,
				Message: "Corrected release fleet/cluster-a.v3: Metal3MachineTemplate/workers: corrected in place, rolls machines: no [" + imageText + "]" +
					". Skipped: Metal3MachineTemplate/opted (opted out). Deleted unused replacements: Metal3MachineTemplate fleet/workers-0a1b2c3d4e"},
			{Type: corev1.EventTypeNormal, Reason: api.TemplatePrunedEvent, Always: true,
				Message: "Deleted unused replacements of release fleet/cluster-a.v3: Metal3MachineTemplate fleet/workers-0a1b2c3d4e"},
		},
		wantCorrections: []plan.Strategy{plan.StrategyInPlace},
	}, {
		name: "replacements pruned on a pass that still sees drift: the prune is reported all the same",
		res:  pruned(result(plan.ModeEnabled, 0, tmpl("workers", plan.OutcomeHeld, heldBy(foreignMD))), oldData),
		want: metav1.Condition{Type: api.TemplatesInSyncCondition, Status: metav1.ConditionFalse, Reason: api.DriftDetectedReason,
			Message: "Drift in release fleet/cluster-a.v3: " + heldLine + ". Deleted unused replacements: Metal3DataTemplate fleet/workers-data-1111111111"},
		wantEvents: []Event{
			{Type: corev1.EventTypeWarning, Reason: api.TemplateDriftDetectedEvent,
				Message: "Drift in release fleet/cluster-a.v3: " + heldLine + ". Deleted unused replacements: Metal3DataTemplate fleet/workers-data-1111111111"},
			{Type: corev1.EventTypeNormal, Reason: api.TemplatePrunedEvent, Always: true,
				Message: "Deleted unused replacements of release fleet/cluster-a.v3: Metal3DataTemplate fleet/workers-data-1111111111"},
		},
		wantDrifted: 1,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			out := Summarize(tc.res)
			g.Expect(out.Remove).To(BeFalse())
			g.Expect(out.Condition).To(Equal(&tc.want))
			g.Expect(out.Events).To(Equal(tc.wantEvents))
			g.Expect(out.Conclusion.Status).To(Equal(tc.want.Status))
			g.Expect(out.Conclusion.Reason).To(Equal(tc.want.Reason))
			g.Expect(out.Conclusion.Drifted).To(Equal(tc.wantDrifted))
			g.Expect(strategies(out.Conclusion.Corrections)).To(Equal(tc.wantCorrections))
			g.Expect(out.Pruned).To(Equal(tc.res.Pruned), "the summary carries the pruned replacements for the metrics")
		})
	}
}

// TestSummarizeHeldSteadyState: the pass that rotates a held template and
// the quiet passes after it write the same condition, so Write emits no
// new event; without pruning the summary carries no pruned replacement.
func TestSummarizeHeldSteadyState(t *testing.T) {
	g := NewWithT(t)
	foreignMD := manifest.ID{GroupKind: manifest.MachineDeploymentKind, Namespace: "fleet", Name: "md-other"}
	rotating := tmpl("workers", plan.OutcomeDrifted, both(heldBy(foreignMD), func(t *plan.TemplatePlan) {
		t.Writes = []plan.Write{plan.WriteCreateReplacement}
	}))
	first := Summarize(result(plan.ModeEnabled, 2, rotating))
	next := Summarize(result(plan.ModeEnabled, 0, tmpl("workers", plan.OutcomeHeld, heldBy(foreignMD))))
	g.Expect(next.Condition).To(Equal(first.Condition))
	g.Expect(first.Pruned).To(BeNil())
	g.Expect(next.Pruned).To(BeNil())

	hr := newHelmRelease(4, ready)
	g.Expect(setCondition(hr, first)).To(BeTrue())
	g.Expect(setCondition(hr, next)).To(BeFalse(), "the held pass changes nothing")
}
