package report

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/apply"
	"github.com/templatedrift/template-drift-controller/internal/diff"
	"github.com/templatedrift/template-drift-controller/internal/pair"
	"github.com/templatedrift/template-drift-controller/internal/plan"
	"github.com/templatedrift/template-drift-controller/internal/release"
)

const testRef = "fleet/cluster-a.v3"

var (
	m3mtKind  = schema.GroupKind{Group: "infrastructure.cluster.x-k8s.io", Kind: "Metal3MachineTemplate"}
	imageURL  = diff.Change{Path: "/spec/template/spec/image/url", Op: diff.OpReplace, Before: "http://10.0.0.1/img", After: "http://10.0.0.2/img"}
	imageText = `/spec/template/spec/image/url: "http://10.0.0.1/img" → "http://10.0.0.2/img"`
)

// testRelease is the stored release every result is built from; its Ref is testRef.
func testRelease() *release.Release {
	return &release.Release{Name: "cluster-a", Namespace: "fleet", Version: 3, Status: "deployed"}
}

// tmpl builds one template result named name in state s.
func tmpl(name string, s plan.State, mutate func(t *apply.TemplateResult)) apply.TemplateResult {
	t := apply.TemplateResult{TemplatePlan: plan.TemplatePlan{
		ID:    pair.ID{GroupKind: m3mtKind, Namespace: "fleet", Name: name},
		State: s,
	}}
	if s == plan.StateDrifted {
		t.Changes = []diff.Change{imageURL}
	}
	if mutate != nil {
		mutate(&t)
	}
	return t
}

// result builds a Result in mode with the given templates and writes.
func result(mode plan.Mode, writes int, templates ...apply.TemplateResult) *apply.Result {
	return &apply.Result{
		Options:   plan.Options{Mode: mode, Strategy: plan.StrategyAuto},
		Release:   testRelease(),
		Templates: templates,
		Writes:    writes,
	}
}

func TestSummarizeVerdicts(t *testing.T) {
	cases := []struct {
		name    string       // what the case proves
		verdict plan.Verdict // the gate's verdict
		want    Outcome      // the whole outcome
	}{{
		name:    "remove: only Remove, no condition, no event",
		verdict: plan.Verdict{Remove: true},
		want:    Outcome{Remove: true},
	}, {
		name:    "silent: no condition change, no event, gauge untouched",
		verdict: plan.Verdict{Silent: true},
		want:    Outcome{Drifted: unknownDrift},
	}, {
		name:    "cluster paused: Normal event",
		verdict: plan.Verdict{Status: "Unknown", Reason: api.ClusterPausedReason, Message: "waiting: Cluster fleet/a is paused"},
		want: Outcome{
			Condition: &metav1.Condition{Type: api.TemplatesInSyncCondition, Status: metav1.ConditionUnknown,
				Reason: api.ClusterPausedReason, Message: "waiting: Cluster fleet/a is paused"},
			Events:  []Event{{Type: "Normal", Reason: api.ClusterPausedReason, Message: "waiting: Cluster fleet/a is paused"}},
			Drifted: unknownDrift, // the gauge keeps its last value
		},
	}, {
		name:    "release unavailable: Warning event",
		verdict: plan.Verdict{Status: "Unknown", Reason: api.ReleaseUnavailableReason, Message: "waiting: stored release is pending-upgrade"},
		want: Outcome{
			Condition: &metav1.Condition{Type: api.TemplatesInSyncCondition, Status: metav1.ConditionUnknown,
				Reason: api.ReleaseUnavailableReason, Message: "waiting: stored release is pending-upgrade"},
			Events:  []Event{{Type: "Warning", Reason: api.ReleaseUnavailableReason, Message: "waiting: stored release is pending-upgrade"}},
			Drifted: unknownDrift, // the gauge keeps its last value
		},
	}, {
		name:    "invalid configuration: False, Warning event",
		verdict: plan.Verdict{Status: "False", Reason: api.InvalidConfigurationReason, Message: "invalid configuration: x"},
		want: Outcome{
			Condition: &metav1.Condition{Type: api.TemplatesInSyncCondition, Status: metav1.ConditionFalse,
				Reason: api.InvalidConfigurationReason, Message: "invalid configuration: x"},
			Events:  []Event{{Type: "Warning", Reason: api.InvalidConfigurationReason, Message: "invalid configuration: x"}},
			Drifted: unknownDrift, // the gauge keeps its last value
		},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			v := tc.verdict
			// Templates and writes are ignored once a gate stopped the pass.
			res := result(plan.ModeEnabled, 3, tmpl("workers", plan.StateDrifted, nil))
			res.Verdict = &v
			g.Expect(Summarize(res)).To(Equal(tc.want))
		})
	}
}

// wantEvent is an event expected from Summarize.
type wantEvent struct {
	typ, reason string   // event type and reason
	always      bool     // emitted even when the condition did not change
	contains    []string // substrings of the message
}

func TestSummarize(t *testing.T) {
	rotated := func(t *apply.TemplateResult) {
		t.Strategy, t.RenameTo, t.Rolls = plan.StrategyRotate, "workers-5f1c2a9b0d", true
	}
	inPlace := func(t *apply.TemplateResult) { t.Strategy = plan.StrategyInPlace }
	skippedCC := tmpl("cc-workers", plan.StateSkipped, func(t *apply.TemplateResult) { t.Skip = "owned by a ClusterClass" })
	skippedOpt := tmpl("opted", plan.StateSkipped, func(t *apply.TemplateResult) { t.Skip = "opted out" })

	cases := []struct {
		name string           // what the case proves
		res  *apply.Result    // the pass's result
		want metav1.Condition // Type is always TemplatesInSync; Message is checked by wantMessage
		// wantMessage is the exact condition message, when set.
		wantMessage string
		// wantContains are substrings of the condition message.
		wantContains []string
		// wantEvents are the events, in order.
		wantEvents []wantEvent
		// wantDrifted is Outcome.Drifted.
		wantDrifted int
	}{{
		name:        "no drift: True/NoDriftDetected, no event",
		res:         result(plan.ModeEnabled, 0, tmpl("workers", plan.StateInSync, nil), tmpl("data", plan.StateInSync, nil)),
		want:        metav1.Condition{Status: metav1.ConditionTrue, Reason: api.NoDriftDetectedReason},
		wantMessage: "2 templates of release fleet/cluster-a.v3 match the manifest",
	}, {
		name:        "enabled, in-place corrected: True/DriftCorrected, Normal event always emitted",
		res:         result(plan.ModeEnabled, 1, tmpl("workers", plan.StateDrifted, inPlace), tmpl("data", plan.StateInSync, nil)),
		want:        metav1.Condition{Status: metav1.ConditionTrue, Reason: api.DriftCorrectedReason},
		wantMessage: "Corrected release fleet/cluster-a.v3: Metal3MachineTemplate/workers: in-place, rolls machines: no [" + imageText + "]",
		wantEvents:  []wantEvent{{typ: "Normal", reason: api.TemplateDriftCorrectedEvent, always: true}},
	}, {
		name:         "enabled, rotation already in effect, nothing written: DriftCorrected, event only on change",
		res:          result(plan.ModeEnabled, 0, tmpl("workers", plan.StateDrifted, rotated)),
		want:         metav1.Condition{Status: metav1.ConditionTrue, Reason: api.DriftCorrectedReason},
		wantContains: []string{"Metal3MachineTemplate/workers: rotate to workers-5f1c2a9b0d, rolls machines: yes [" + imageText + "]"},
		wantEvents:   []wantEvent{{typ: "Normal", reason: api.TemplateDriftCorrectedEvent, always: false}},
	}, {
		name:        "warn mode drift: False/DriftDetected, would in-place, Warning event",
		res:         result(plan.ModeWarn, 0, tmpl("workers", plan.StateDrifted, inPlace)),
		want:        metav1.Condition{Status: metav1.ConditionFalse, Reason: api.DriftDetectedReason},
		wantMessage: "Drift in release fleet/cluster-a.v3: Metal3MachineTemplate/workers: would in-place, rolls machines: no [" + imageText + "]",
		wantEvents:  []wantEvent{{typ: "Warning", reason: api.TemplateDriftDetectedEvent}},
		wantDrifted: 1,
	}, {
		name:         "warn mode rotate: would rotate to the replacement, rolls machines",
		res:          result(plan.ModeWarn, 0, tmpl("workers", plan.StateDrifted, rotated)),
		want:         metav1.Condition{Status: metav1.ConditionFalse, Reason: api.DriftDetectedReason},
		wantContains: []string{"Metal3MachineTemplate/workers: would rotate to workers-5f1c2a9b0d, rolls machines: yes ["},
		wantEvents:   []wantEvent{{typ: "Warning", reason: api.TemplateDriftDetectedEvent}},
		wantDrifted:  1,
	}, {
		name:         "enabled rotate with writes",
		res:          result(plan.ModeEnabled, 2, tmpl("workers", plan.StateDrifted, rotated)),
		want:         metav1.Condition{Status: metav1.ConditionTrue, Reason: api.DriftCorrectedReason},
		wantContains: []string{"Metal3MachineTemplate/workers: rotate to workers-5f1c2a9b0d, rolls machines: yes ["},
		wantEvents:   []wantEvent{{typ: "Normal", reason: api.TemplateDriftCorrectedEvent, always: true}},
	}, {
		name:         "enabled recreate that does not roll",
		res:          result(plan.ModeEnabled, 2, tmpl("workers", plan.StateDrifted, func(t *apply.TemplateResult) { t.Strategy = plan.StrategyRecreate })),
		want:         metav1.Condition{Status: metav1.ConditionTrue, Reason: api.DriftCorrectedReason},
		wantContains: []string{"Metal3MachineTemplate/workers: recreate, rolls machines: no ["},
		wantEvents:   []wantEvent{{typ: "Normal", reason: api.TemplateDriftCorrectedEvent, always: true}},
	}, {
		name: "Err set: False/CorrectionFailed with the error, even with corrections listed",
		res: func() *apply.Result {
			r := result(plan.ModeEnabled, 1, tmpl("workers", plan.StateDrifted, inPlace))
			r.Err = errors.New("admission webhook denied the request")
			return r
		}(),
		want:        metav1.Condition{Status: metav1.ConditionFalse, Reason: api.CorrectionFailedReason},
		wantMessage: "Correction of release fleet/cluster-a.v3 failed: admission webhook denied the request",
		wantEvents:  []wantEvent{{typ: "Warning", reason: api.TemplateDriftCorrectionFailedEvent, contains: []string{"admission webhook denied the request"}}},
		wantDrifted: 1, // the failed write may have left the template drifted
	}, {
		name: "enabled, template failed: False/CorrectionFailed listing the failure",
		res: result(plan.ModeEnabled, 0, tmpl("workers", plan.StateDrifted, func(t *apply.TemplateResult) {
			t.Failed = "in-place correction refused: field is immutable"
		})),
		want:        metav1.Condition{Status: metav1.ConditionFalse, Reason: api.CorrectionFailedReason},
		wantMessage: "Correction of release fleet/cluster-a.v3 failed: Metal3MachineTemplate/workers: in-place correction refused: field is immutable",
		wantEvents:  []wantEvent{{typ: "Warning", reason: api.TemplateDriftCorrectionFailedEvent}},
		wantDrifted: 1,
	}, {
		name: "warn, template failed: reported as drift, not as a failed correction",
		res: result(plan.ModeWarn, 0, tmpl("workers", plan.StateDrifted, func(t *apply.TemplateResult) {
			t.Failed = "in-place correction refused: field is immutable"
		})),
		want:         metav1.Condition{Status: metav1.ConditionFalse, Reason: api.DriftDetectedReason},
		wantContains: []string{"Metal3MachineTemplate/workers: in-place correction refused: field is immutable"},
		wantEvents:   []wantEvent{{typ: "Warning", reason: api.TemplateDriftDetectedEvent}},
		wantDrifted:  1,
	}, {
		name:        "enabled, missing template recreated",
		res:         result(plan.ModeEnabled, 1, tmpl("workers", plan.StateMissing, func(t *apply.TemplateResult) { t.Strategy = plan.StrategyRecreate })),
		want:        metav1.Condition{Status: metav1.ConditionTrue, Reason: api.DriftCorrectedReason},
		wantMessage: "Corrected release fleet/cluster-a.v3: Metal3MachineTemplate/workers: missing, recreated from the manifest, rolls machines: no",
		wantEvents:  []wantEvent{{typ: "Normal", reason: api.TemplateDriftCorrectedEvent, always: true}},
	}, {
		name:         "warn, missing template: would recreate, counted as drifted",
		res:          result(plan.ModeWarn, 0, tmpl("workers", plan.StateMissing, nil)),
		want:         metav1.Condition{Status: metav1.ConditionFalse, Reason: api.DriftDetectedReason},
		wantContains: []string{"Metal3MachineTemplate/workers: missing, would recreate from the manifest"},
		wantEvents:   []wantEvent{{typ: "Warning", reason: api.TemplateDriftDetectedEvent}},
		wantDrifted:  1,
	}, {
		name:         "enabled, template being deleted: drift detected while waiting",
		res:          result(plan.ModeEnabled, 0, tmpl("workers", plan.StateDeleting, nil)),
		want:         metav1.Condition{Status: metav1.ConditionFalse, Reason: api.DriftDetectedReason},
		wantContains: []string{"Metal3MachineTemplate/workers: waiting for deletion to finish"},
		wantEvents:   []wantEvent{{typ: "Warning", reason: api.TemplateDriftDetectedEvent}},
		wantDrifted:  1,
	}, {
		name: "skipped templates are listed after the corrections, in the event too",
		res:  result(plan.ModeEnabled, 1, skippedCC, tmpl("workers", plan.StateDrifted, inPlace), skippedOpt),
		want: metav1.Condition{Status: metav1.ConditionTrue, Reason: api.DriftCorrectedReason},
		wantMessage: "Corrected release fleet/cluster-a.v3: Metal3MachineTemplate/workers: in-place, rolls machines: no [" + imageText + "]" +
			". Skipped: Metal3MachineTemplate/cc-workers (owned by a ClusterClass), Metal3MachineTemplate/opted (opted out)",
		wantEvents: []wantEvent{{typ: "Normal", reason: api.TemplateDriftCorrectedEvent, always: true,
			contains: []string{". Skipped: Metal3MachineTemplate/cc-workers (owned by a ClusterClass)"}}},
	}, {
		name:         "skipped templates on a pass without drift",
		res:          result(plan.ModeWarn, 0, tmpl("workers", plan.StateInSync, nil), skippedOpt),
		want:         metav1.Condition{Status: metav1.ConditionTrue, Reason: api.NoDriftDetectedReason},
		wantContains: []string{"match the manifest. Skipped: Metal3MachineTemplate/opted (opted out)"},
	}, {
		name: "reverted reference with writes: Warning TemplateReferenceReverted after the correction event",
		res: result(plan.ModeEnabled, 1, tmpl("workers", plan.StateDrifted, func(t *apply.TemplateResult) {
			rotated(t)
			t.Reverted = true
		})),
		want: metav1.Condition{Status: metav1.ConditionTrue, Reason: api.DriftCorrectedReason},
		wantEvents: []wantEvent{
			{typ: "Normal", reason: api.TemplateDriftCorrectedEvent, always: true},
			{typ: "Warning", reason: api.TemplateReferenceRevertedEvent, always: true, contains: []string{
				"A reference to Metal3MachineTemplate/fleet/workers was set back (by Helm or a person) and repointed to workers-5f1c2a9b0d again",
			}},
		},
	}, {
		name: "reverted without writes (warn mode): no reverted event",
		res: result(plan.ModeWarn, 0, tmpl("workers", plan.StateDrifted, func(t *apply.TemplateResult) {
			rotated(t)
			t.Reverted = true
		})),
		want:        metav1.Condition{Status: metav1.ConditionFalse, Reason: api.DriftDetectedReason},
		wantEvents:  []wantEvent{{typ: "Warning", reason: api.TemplateDriftDetectedEvent}},
		wantDrifted: 1,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			out := Summarize(tc.res)

			g.Expect(out.Remove).To(BeFalse())
			g.Expect(out.Wrote).To(Equal(tc.res.Writes > 0))
			g.Expect(out.ReleaseRef).To(Equal(testRef))
			g.Expect(out.Drifted).To(Equal(tc.wantDrifted))

			g.Expect(out.Condition).NotTo(BeNil())
			c := *out.Condition
			g.Expect(c.Type).To(Equal(api.TemplatesInSyncCondition))
			g.Expect(c.Status).To(Equal(tc.want.Status))
			g.Expect(c.Reason).To(Equal(tc.want.Reason))
			if tc.wantMessage != "" {
				g.Expect(c.Message).To(Equal(tc.wantMessage))
			}
			for _, s := range tc.wantContains {
				g.Expect(c.Message).To(ContainSubstring(s))
			}

			g.Expect(out.Events).To(HaveLen(len(tc.wantEvents)))
			for i, w := range tc.wantEvents {
				e := out.Events[i]
				g.Expect(e.Type).To(Equal(w.typ), "event %d", i)
				g.Expect(e.Reason).To(Equal(w.reason), "event %d", i)
				g.Expect(e.Always).To(Equal(w.always), "event %d", i)
				for _, s := range w.contains {
					g.Expect(e.Message).To(ContainSubstring(s), "event %d", i)
				}
			}
			// The event reporting the state carries the condition's text.
			if len(out.Events) > 0 {
				g.Expect(out.Events[0].Message).To(Equal(c.Message))
			}
		})
	}
}

func TestSummarizeTruncatesLongMessages(t *testing.T) {
	g := NewWithT(t)
	// Multi-byte runes: the cut must count runes, not bytes.
	long := strings.Repeat("ü", 2*maxMessageRunes)
	res := result(plan.ModeEnabled, 0, tmpl("workers", plan.StateDrifted, func(t *apply.TemplateResult) {
		t.Failed = "in-place correction refused: " + long
	}))
	out := Summarize(res)
	g.Expect(out.Condition).NotTo(BeNil())
	msg := out.Condition.Message
	g.Expect(utf8.ValidString(msg)).To(BeTrue())
	g.Expect(utf8.RuneCountInString(msg)).To(Equal(maxMessageRunes + 1))
	g.Expect(msg).To(HaveSuffix("…"))
	g.Expect(msg).To(HavePrefix("Correction of release fleet/cluster-a.v3 failed: Metal3MachineTemplate/workers: in-place correction refused: üü"))

	// A message at the limit is kept whole.
	prefix := "Correction of release fleet/cluster-a.v3 failed: Metal3MachineTemplate/workers: "
	exact := strings.Repeat("é", maxMessageRunes-utf8.RuneCountInString(prefix))
	res = result(plan.ModeEnabled, 0, tmpl("workers", plan.StateDrifted, func(t *apply.TemplateResult) { t.Failed = exact }))
	out = Summarize(res)
	g.Expect(out.Condition.Message).To(Equal(prefix + exact))

	// One rune more is cut.
	res = result(plan.ModeEnabled, 0, tmpl("workers", plan.StateDrifted, func(t *apply.TemplateResult) { t.Failed = exact + "x" }))
	out = Summarize(res)
	g.Expect(out.Condition.Message).To(Equal(prefix + exact + "…"))
}

func TestSummarizeCountsDrifted(t *testing.T) {
	cases := []struct {
		name string    // what the case proves
		mode plan.Mode // the release's mode
		want int       // Outcome.Drifted
	}{
		{name: "warn counts every template not in sync or skipped", mode: plan.ModeWarn, want: 4},
		{name: "enabled counts only failed and waiting templates", mode: plan.ModeEnabled, want: 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := result(tc.mode, 0,
				tmpl("a", plan.StateDrifted, func(t *apply.TemplateResult) { t.Strategy = plan.StrategyInPlace }),
				tmpl("b", plan.StateDrifted, func(t *apply.TemplateResult) { t.Failed = "refused" }),
				tmpl("c", plan.StateDeleting, nil),
				tmpl("d", plan.StateMissing, nil),
				tmpl("e", plan.StateInSync, nil),
				tmpl("f", plan.StateSkipped, func(t *apply.TemplateResult) { t.Skip = "opted out" }),
			)
			NewWithT(t).Expect(Summarize(res).Drifted).To(Equal(tc.want))
		})
	}
}

// TestSummarizeSuperseded: a rotation completed by an earlier pass (the
// replacement matches, the original is marked) is not drift.
func TestSummarizeSuperseded(t *testing.T) {
	superseded := func(t *apply.TemplateResult) {
		t.Strategy, t.RenameTo, t.Rolls, t.Superseded = plan.StrategyRotate, "workers-5f1c2a9b0d", true, true
	}
	cases := []struct {
		name         string    // what the case proves
		mode         plan.Mode // the release's mode
		wantContains string    // substring of the condition message
		wantAbsent   string    // text the message must not contain
	}{{
		name:         "warn: noted as superseded, not as a rotation still to do",
		mode:         plan.ModeWarn,
		wantContains: "2 templates of release fleet/cluster-a.v3 match the manifest. Superseded earlier: Metal3MachineTemplate/workers by workers-5f1c2a9b0d",
		wantAbsent:   "would rotate",
	}, {
		name:         "enabled: the same note; the pass that rotated wrote the DriftCorrected record, which Write keeps",
		mode:         plan.ModeEnabled,
		wantContains: "Superseded earlier: Metal3MachineTemplate/workers by workers-5f1c2a9b0d",
		wantAbsent:   "rotate to",
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			out := Summarize(result(tc.mode, 0, tmpl("workers", plan.StateDrifted, superseded), tmpl("data", plan.StateInSync, nil)))
			g.Expect(out.Drifted).To(BeZero())
			g.Expect(out.Condition).NotTo(BeNil())
			g.Expect(out.Condition.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(out.Condition.Reason).To(Equal(api.NoDriftDetectedReason))
			g.Expect(out.Condition.Message).To(ContainSubstring(tc.wantContains))
			g.Expect(out.Condition.Message).NotTo(ContainSubstring(tc.wantAbsent))
			for _, e := range out.Events {
				g.Expect(e.Type).To(Equal("Normal"))
				g.Expect(e.Always).To(BeFalse(), "nothing was written")
			}
		})
	}
}
