package plan_test

import (
	"errors"
	"slices"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/plan"
)

// outcome builds the plan of a template named name with outcome o and
// strategy s, the fields Conclude reads.
func outcome(name string, o plan.Outcome, s plan.Strategy) plan.TemplatePlan {
	return plan.TemplatePlan{ID: id(manifest.Metal3MachineTemplateKind, "fleet", name), Outcome: o, Strategy: s}
}

// corrections are the corrections of templates of outcome's kind with
// strategies ss.
func corrections(ss ...plan.Strategy) []plan.Correction {
	out := make([]plan.Correction, 0, len(ss))
	for _, s := range ss {
		out = append(out, plan.Correction{Kind: manifest.Metal3MachineTemplateKind.Kind, Strategy: s})
	}
	return out
}

// held builds the plan of a rotation of template "h" with outcome o that a
// MachineDeployment outside the release still uses.
func held(o plan.Outcome) plan.TemplatePlan {
	t := outcome("h", o, plan.StrategyRotate)
	t.Rotation = &plan.Rotation{To: "h-5f1c2a9b0d"}
	t.Rotation.HeldBy = []manifest.ID{id(manifest.MachineDeploymentKind, "fleet", "md-other")}
	return t
}

func TestConclude(t *testing.T) {
	writeErr := errors.New("admission webhook denied the request")
	paused := plan.Verdict{Status: metav1.ConditionUnknown, Reason: api.ClusterPausedReason, Message: "waiting: Cluster fleet/a is paused"}
	drifted := outcome("a", plan.OutcomeDrifted, plan.StrategyInPlace)

	cases := []struct {
		name      string              // what the case proves
		act       bool                // Decisions.Act: the pass may write
		verdict   *plan.Verdict       // Decisions.Verdict
		templates []plan.TemplatePlan // Decisions.Templates
		conflicts []plan.Conflict     // Decisions.Conflicts: consumers of another release
		actErr    error               // the error that stopped the writes
		writes    int                 // the writes made
		want      plan.Conclusion     // the whole conclusion
	}{{
		name:      "verdict passes through; templates, error and writes are ignored; the gauge is unknown",
		act:       true,
		verdict:   &paused,
		templates: []plan.TemplatePlan{drifted},
		actErr:    writeErr,
		writes:    2,
		want:      plan.Conclusion{Status: metav1.ConditionUnknown, Reason: api.ClusterPausedReason, Drifted: plan.UnknownDrift},
	}, {
		name: "warn mode, consumers would move back to an original that matches again: drift of their references",
		templates: []plan.TemplatePlan{func() plan.TemplatePlan {
			t := outcome("a", plan.OutcomeInSync, "")
			t.Restored = true
			return t
		}()},
		want: plan.Conclusion{Status: metav1.ConditionFalse, Reason: api.DriftDetectedReason, Drifted: 1, Checked: 1},
	}, {
		name: "enabled, consumers moved back: corrected",
		act:  true,
		templates: []plan.TemplatePlan{func() plan.TemplatePlan {
			t := outcome("a", plan.OutcomeInSync, "")
			t.Restored = true
			return t
		}()},
		writes: 5,
		want:   plan.Conclusion{Status: metav1.ConditionTrue, Reason: api.DriftCorrectedReason, Checked: 1},
	}, {
		name: "the pass that only marks a held rotation's original counts no new correction",
		act:  true,
		templates: []plan.TemplatePlan{func() plan.TemplatePlan {
			t := outcome("a", plan.OutcomeDrifted, plan.StrategyRotate)
			t.Writes = []plan.Write{plan.WriteMarkSuperseded}
			return t
		}()},
		writes: 1,
		want:   plan.Conclusion{Status: metav1.ConditionTrue, Reason: api.DriftCorrectedReason, Checked: 1},
	}, {
		name:    "remove verdict",
		verdict: &plan.Verdict{Remove: true},
		want:    plan.Conclusion{Remove: true, Drifted: plan.UnknownDrift},
	}, {
		name:    "silent verdict",
		verdict: &plan.Verdict{Silent: true},
		want:    plan.Conclusion{Silent: true, Drifted: plan.UnknownDrift},
	}, {
		name: "write error: CorrectionFailed, every differing template counted, every correction tried counted as failed",
		act:  true,
		templates: []plan.TemplatePlan{
			drifted,
			outcome("b", plan.OutcomeDrifted, plan.StrategyRotate),
			outcome("c", plan.OutcomeMissing, plan.StrategyRecreate),
			outcome("d", plan.OutcomeWaiting, ""),
			outcome("e", plan.OutcomeInSync, ""),
			outcome("f", plan.OutcomeCorrected, plan.StrategyInPlace),
			outcome("g", plan.OutcomeSkipped, ""),
		},
		actErr: writeErr,
		writes: 1,
		want: plan.Conclusion{Status: metav1.ConditionFalse, Reason: api.CorrectionFailedReason, Drifted: 4,
			Corrections:       corrections(plan.StrategyInPlace, plan.StrategyRotate, plan.StrategyRecreate),
			CorrectionsFailed: true, Checked: 6},
	}, {
		name:      "write error on the first write: the correction tried is still counted",
		act:       true,
		templates: []plan.TemplatePlan{drifted},
		actErr:    writeErr,
		writes:    0,
		want: plan.Conclusion{Status: metav1.ConditionFalse, Reason: api.CorrectionFailedReason, Drifted: 1,
			Corrections: corrections(plan.StrategyInPlace), CorrectionsFailed: true, Checked: 1},
	}, {
		name:      "a failed template when acting: CorrectionFailed; the others' corrections count as made",
		act:       true,
		templates: []plan.TemplatePlan{outcome("a", plan.OutcomeFailed, ""), outcome("b", plan.OutcomeDrifted, plan.StrategyRecreate)},
		writes:    2,
		want: plan.Conclusion{Status: metav1.ConditionFalse, Reason: api.CorrectionFailedReason, Drifted: 1,
			Corrections: corrections(plan.StrategyRecreate), Checked: 2},
	}, {
		name:      "the same failed template in warn mode: only drift",
		templates: []plan.TemplatePlan{outcome("a", plan.OutcomeFailed, ""), outcome("b", plan.OutcomeDrifted, plan.StrategyRecreate)},
		want:      plan.Conclusion{Status: metav1.ConditionFalse, Reason: api.DriftDetectedReason, Drifted: 2, Checked: 2},
	}, {
		name:      "warn: drifted and missing templates are drift",
		templates: []plan.TemplatePlan{drifted, outcome("b", plan.OutcomeMissing, plan.StrategyRecreate), outcome("c", plan.OutcomeInSync, "")},
		want:      plan.Conclusion{Status: metav1.ConditionFalse, Reason: api.DriftDetectedReason, Drifted: 2, Checked: 3},
	}, {
		name:      "acting, a template waiting for its deletion is drift; the correction made beside it counts",
		act:       true,
		templates: []plan.TemplatePlan{outcome("a", plan.OutcomeWaiting, ""), drifted},
		writes:    1,
		want: plan.Conclusion{Status: metav1.ConditionFalse, Reason: api.DriftDetectedReason, Drifted: 1,
			Corrections: corrections(plan.StrategyInPlace), Checked: 2},
	}, {
		name:      "warn: waiting is drift",
		templates: []plan.TemplatePlan{outcome("a", plan.OutcomeWaiting, "")},
		want:      plan.Conclusion{Status: metav1.ConditionFalse, Reason: api.DriftDetectedReason, Drifted: 1, Checked: 1},
	}, {
		name:      "acting on drift: DriftCorrected, nothing left drifted",
		act:       true,
		templates: []plan.TemplatePlan{drifted, outcome("b", plan.OutcomeMissing, plan.StrategyRecreate), outcome("c", plan.OutcomeInSync, "")},
		writes:    2,
		want: plan.Conclusion{Status: metav1.ConditionTrue, Reason: api.DriftCorrectedReason,
			Corrections: corrections(plan.StrategyInPlace, plan.StrategyRecreate), Checked: 3},
	}, {
		name:      "a correction recorded for this release: DriftCorrected on a quiet pass, nothing counted",
		act:       true,
		templates: []plan.TemplatePlan{outcome("a", plan.OutcomeCorrected, plan.StrategyRotate), outcome("b", plan.OutcomeInSync, "")},
		want:      plan.Conclusion{Status: metav1.ConditionTrue, Reason: api.DriftCorrectedReason, Checked: 2},
	}, {
		name:      "a recorded correction reads the same in warn mode",
		templates: []plan.TemplatePlan{outcome("a", plan.OutcomeCorrected, plan.StrategyInPlace)},
		want:      plan.Conclusion{Status: metav1.ConditionTrue, Reason: api.DriftCorrectedReason, Checked: 1},
	}, {
		name: "in sync, superseded and skipped: NoDriftDetected; skipped templates are not checked",
		act:  true,
		templates: []plan.TemplatePlan{
			outcome("a", plan.OutcomeInSync, ""),
			outcome("b", plan.OutcomeSuperseded, plan.StrategyRotate),
			outcome("c", plan.OutcomeSkipped, ""),
		},
		want: plan.Conclusion{Status: metav1.ConditionTrue, Reason: api.NoDriftDetectedReason, Checked: 2},
	}, {
		name: "no templates: NoDriftDetected, nothing checked",
		act:  true,
		want: plan.Conclusion{Status: metav1.ConditionTrue, Reason: api.NoDriftDetectedReason},
	}, {
		name:      "acting, a blocked template: False/CorrectionBlocked, counted as drifted; the correction beside it counts",
		act:       true,
		templates: []plan.TemplatePlan{outcome("a", plan.OutcomeBlocked, plan.StrategyRecreate), outcome("b", plan.OutcomeDrifted, plan.StrategyInPlace)},
		writes:    1,
		want: plan.Conclusion{Status: metav1.ConditionFalse, Reason: api.CorrectionBlockedReason, Drifted: 1,
			Corrections: corrections(plan.StrategyInPlace), Checked: 2},
	}, {
		name:      "warn, a blocked template: only drift",
		templates: []plan.TemplatePlan{outcome("a", plan.OutcomeBlocked, plan.StrategyRecreate), outcome("b", plan.OutcomeInSync, "")},
		want:      plan.Conclusion{Status: metav1.ConditionFalse, Reason: api.DriftDetectedReason, Drifted: 1, Checked: 2},
	}, {
		name:      "acting, failed and blocked: CorrectionFailed wins, both counted",
		act:       true,
		templates: []plan.TemplatePlan{outcome("a", plan.OutcomeBlocked, plan.StrategyRecreate), outcome("b", plan.OutcomeFailed, "")},
		want:      plan.Conclusion{Status: metav1.ConditionFalse, Reason: api.CorrectionFailedReason, Drifted: 2, Checked: 2},
	}, {
		name:      "acting, a held rotation: DriftDetected, nothing corrected",
		act:       true,
		templates: []plan.TemplatePlan{held(plan.OutcomeHeld), outcome("b", plan.OutcomeInSync, "")},
		want:      plan.Conclusion{Status: metav1.ConditionFalse, Reason: api.DriftDetectedReason, Drifted: 1, Checked: 2},
	}, {
		name:      "warn, a held rotation: DriftDetected",
		templates: []plan.TemplatePlan{held(plan.OutcomeHeld)},
		want:      plan.Conclusion{Status: metav1.ConditionFalse, Reason: api.DriftDetectedReason, Drifted: 1, Checked: 1},
	}, {
		name:      "acting, a rotation written that foreign consumers hold: DriftDetected, not DriftCorrected; the rotation counts",
		act:       true,
		templates: []plan.TemplatePlan{held(plan.OutcomeDrifted)},
		writes:    2,
		want: plan.Conclusion{Status: metav1.ConditionFalse, Reason: api.DriftDetectedReason, Drifted: 1,
			Corrections: corrections(plan.StrategyRotate), Checked: 1},
	}, {
		name:      "warn, a rotation that foreign consumers would hold: counted once",
		templates: []plan.TemplatePlan{held(plan.OutcomeDrifted)},
		want:      plan.Conclusion{Status: metav1.ConditionFalse, Reason: api.DriftDetectedReason, Drifted: 1, Checked: 1},
	}, {
		name: "write error beside blocked and held templates: CorrectionFailed, every one of them differing",
		act:  true,
		templates: []plan.TemplatePlan{
			outcome("a", plan.OutcomeBlocked, plan.StrategyRecreate),
			held(plan.OutcomeHeld),
			drifted,
		},
		actErr: writeErr,
		want: plan.Conclusion{Status: metav1.ConditionFalse, Reason: api.CorrectionFailedReason, Drifted: 3,
			Corrections: corrections(plan.StrategyInPlace), CorrectionsFailed: true, Checked: 3},
	}, {
		name:      "acting on drift with no write made and no error: no correction counted",
		act:       true,
		templates: []plan.TemplatePlan{drifted},
		writes:    0,
		want:      plan.Conclusion{Status: metav1.ConditionTrue, Reason: api.DriftCorrectedReason, Checked: 1},
	}, {
		name:      "a template of another release: False/OwnershipConflict, not checked, not drifted",
		templates: []plan.TemplatePlan{outcome("a", plan.OutcomeInSync, ""), outcome("b", plan.OutcomeConflict, "")},
		want:      plan.Conclusion{Status: metav1.ConditionFalse, Reason: api.OwnershipConflictReason, Checked: 1},
	}, {
		name:      "a consumer of another release: False/OwnershipConflict",
		templates: []plan.TemplatePlan{outcome("a", plan.OutcomeInSync, "")},
		conflicts: []plan.Conflict{{Owner: "fleet/other"}},
		want:      plan.Conclusion{Status: metav1.ConditionFalse, Reason: api.OwnershipConflictReason, Checked: 1},
	}, {
		name:      "a conflict next to a correction made: the conflict is the reason, the correction is counted",
		act:       true,
		templates: []plan.TemplatePlan{drifted, outcome("b", plan.OutcomeConflict, "")},
		writes:    1,
		want: plan.Conclusion{Status: metav1.ConditionFalse, Reason: api.OwnershipConflictReason, Checked: 1,
			Corrections: corrections(plan.StrategyInPlace)},
	}, {
		name:      "a blocked correction outranks a conflict",
		act:       true,
		templates: []plan.TemplatePlan{outcome("a", plan.OutcomeBlocked, plan.StrategyRecreate), outcome("b", plan.OutcomeConflict, "")},
		want:      plan.Conclusion{Status: metav1.ConditionFalse, Reason: api.CorrectionBlockedReason, Checked: 1, Drifted: 1},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			d := plan.Decisions{Options: plan.Options{Mode: plan.ModeWarn}, Act: tc.act, Verdict: tc.verdict, Templates: tc.templates, Conflicts: tc.conflicts}
			if tc.act {
				d.Options.Mode = plan.ModeEnabled
			}
			got := plan.Conclude(d, tc.actErr, tc.writes)
			// The event type follows the reason alone: TestConcludeWarning.
			want := tc.want
			want.Warning = got.Warning
			g.Expect(got).To(Equal(want))
			if tc.want.Corrections == nil {
				g.Expect(got.Corrections).To(BeNil(), "nil, not empty")
			}
		})
	}
}

// TestConcludeWarning: the condition's event is a Warning for every
// reason but those in sync and the waits that are a normal state of a
// cluster.
func TestConcludeWarning(t *testing.T) {
	normal := []string{api.DriftCorrectedReason, api.NoDriftDetectedReason, api.ClusterPausedReason, api.ReleaseInProgressReason}
	warning := []string{api.DriftDetectedReason, api.CorrectionFailedReason, api.CorrectionBlockedReason, api.OwnershipConflictReason,
		api.ReleaseUnavailableReason, api.ClusterUnavailableReason, api.InvalidConfigurationReason, api.AccessDeniedReason}
	g := NewWithT(t)
	for _, reason := range append(normal, warning...) {
		v := plan.Verdict{Status: metav1.ConditionUnknown, Reason: reason}
		got := plan.Conclude(plan.Decisions{Verdict: &v}, nil, 0)
		g.Expect(got.Warning).To(Equal(!slices.Contains(normal, reason)), reason)
	}
	g.Expect(plan.Conclude(plan.Decisions{Verdict: &plan.Verdict{Remove: true}}, nil, 0).Warning).To(BeFalse(), "no condition, no event")
	inSync := plan.Conclude(plan.Decisions{Act: true, Templates: []plan.TemplatePlan{outcome("a", plan.OutcomeInSync, "")}}, nil, 0)
	g.Expect(inSync.Reason).To(Equal(api.NoDriftDetectedReason))
	g.Expect(inSync.Warning).To(BeFalse())
	failed := plan.Conclude(plan.Decisions{Act: true, Templates: []plan.TemplatePlan{outcome("a", plan.OutcomeDrifted, plan.StrategyInPlace)}}, errors.New("refused"), 0)
	g.Expect(failed.Reason).To(Equal(api.CorrectionFailedReason))
	g.Expect(failed.Warning).To(BeTrue())
}

func TestOutcomeDiffers(t *testing.T) {
	cases := []struct {
		outcome plan.Outcome // the outcome
		want    bool         // Differs()
	}{
		{plan.OutcomeInSync, false},
		{plan.OutcomeCorrected, false},
		{plan.OutcomeSuperseded, false},
		{plan.OutcomeSkipped, false},
		{plan.OutcomeDrifted, true},
		{plan.OutcomeMissing, true},
		{plan.OutcomeWaiting, true},
		{plan.OutcomeFailed, true},
		{plan.OutcomeBlocked, true},
		{plan.OutcomeHeld, true},
	}
	for _, tc := range cases {
		t.Run(string(tc.outcome), func(t *testing.T) {
			NewWithT(t).Expect(tc.outcome.Differs()).To(Equal(tc.want))
		})
	}
}

func TestTemplatePlanNeeds(t *testing.T) {
	g := NewWithT(t)
	p := plan.TemplatePlan{Writes: []plan.Write{plan.WriteDelete, plan.WriteCreate}}
	g.Expect(p.Needs(plan.WriteDelete)).To(BeTrue())
	g.Expect(p.Needs(plan.WriteCreate)).To(BeTrue())
	g.Expect(p.Needs(plan.WritePatch)).To(BeFalse())
	g.Expect(plan.TemplatePlan{}.Needs(plan.WriteCreate)).To(BeFalse())
}

func TestNextPass(t *testing.T) {
	cases := []struct {
		name   string
		c      plan.Conclusion
		actErr error
		want   plan.Next
	}{
		{name: "writes failed: back-off", c: plan.Conclusion{Status: metav1.ConditionFalse, Reason: api.CorrectionFailedReason}, actErr: errors.New("refused"), want: plan.NextBackoff},
		{name: "opted out: never", c: plan.Conclusion{Remove: true}, want: plan.NextNever},
		{name: "suspended: never", c: plan.Conclusion{Silent: true}, want: plan.NextNever},
		{name: "drift left: wait", c: plan.Conclusion{Status: metav1.ConditionFalse, Reason: api.DriftDetectedReason}, want: plan.NextWait},
		{name: "a wait: wait", c: plan.Conclusion{Status: metav1.ConditionUnknown, Reason: api.ClusterPausedReason}, want: plan.NextWait},
		{name: "in sync: resync", c: plan.Conclusion{Status: metav1.ConditionTrue, Reason: api.NoDriftDetectedReason}, want: plan.NextResync},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			NewWithT(t).Expect(plan.NextPass(tc.c, tc.actErr)).To(Equal(tc.want))
		})
	}
}
