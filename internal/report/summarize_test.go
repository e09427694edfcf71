package report

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/diff"
	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/pipeline"
	"github.com/templatedrift/template-drift-controller/internal/plan"
	"github.com/templatedrift/template-drift-controller/internal/release"
)

const (
	testRef     = "fleet/cluster-a.v3"
	replacement = "workers-5f1c2a9b0d"
)

var (
	m3mtKind  = schema.GroupKind{Group: "infrastructure.cluster.x-k8s.io", Kind: "Metal3MachineTemplate"}
	imageURL  = diff.Change{Path: "/spec/template/spec/image/url", Op: diff.OpReplace, Before: "http://10.0.0.1/img", After: "http://10.0.0.2/img"}
	imageText = `/spec/template/spec/image/url: "http://10.0.0.1/img" → "http://10.0.0.2/img"`
)

// testRelease is the stored release every result is built from; its Ref is testRef.
func testRelease() *release.Release {
	return &release.Release{Name: "cluster-a", Namespace: "fleet", Version: 3, Status: "deployed"}
}

// tmpl builds the plan of one template named name with outcome o. Outcomes
// that differ from the manifest carry the image drift; mutate adjusts the
// rest.
func tmpl(name string, o plan.Outcome, mutate func(t *plan.TemplatePlan)) plan.TemplatePlan {
	t := plan.TemplatePlan{
		ID:      manifest.ID{GroupKind: m3mtKind, Namespace: "fleet", Name: name},
		Outcome: o,
	}
	if o.Differs() && o != plan.OutcomeMissing {
		t.Changes = []diff.Change{imageURL}
	}
	if mutate != nil {
		mutate(&t)
	}
	return t
}

// Strategies of a template plan, as mutate functions for tmpl.
func inPlace(t *plan.TemplatePlan)   { t.Strategy = plan.StrategyInPlace }
func recreated(t *plan.TemplatePlan) { t.Strategy = plan.StrategyRecreate }
func rotated(t *plan.TemplatePlan) {
	t.Strategy, t.Rotation, t.RollsMachines = plan.StrategyRotate, &plan.Rotation{To: replacement}, true
}

// awaitingRollout holds a rotation back for its rollout, in state: a
// MachineDeployment with 2 Machines would roll.
func awaitingRollout(state plan.RolloutState) func(t *plan.TemplatePlan) {
	return func(t *plan.TemplatePlan) {
		rotated(t)
		md := manifest.ID{GroupKind: manifest.MachineDeploymentKind, Namespace: "fleet", Name: "md0"}
		t.Rollout = &plan.MachineRollout{ID: "0123456789", To: replacement, State: state, Was: plan.OutcomeDrifted,
			Consumers: []plan.RolledConsumer{{ID: md, Machines: plan.MachineCount{N: 2, Known: true}}}}
	}
}

// withChanges adds the image drift to a template (the original of a
// rotation keeps its drift after the rotation).
func withChanges(t *plan.TemplatePlan) { t.Changes = []diff.Change{imageURL} }

// both applies every mutation in order.
func both(ms ...func(t *plan.TemplatePlan)) func(t *plan.TemplatePlan) {
	return func(t *plan.TemplatePlan) {
		for _, m := range ms {
			m(t)
		}
	}
}

// failed marks a template as failed with msg.
func failed(msg string) func(t *plan.TemplatePlan) {
	return func(t *plan.TemplatePlan) { t.Message = msg }
}

// strategies are the strategies of cs, in order; nil for none.
func strategies(cs []plan.Correction) []plan.Strategy {
	var out []plan.Strategy
	for _, c := range cs {
		out = append(out, c.Strategy)
	}
	return out
}

// result builds the Result of a pass in mode, as the engine does: it acts
// only in enabled mode.
func result(mode plan.Mode, writes int, templates ...plan.TemplatePlan) *pipeline.Result {
	return &pipeline.Result{
		Decisions: plan.Decisions{
			Options:   plan.Options{Mode: mode, Strategy: plan.StrategyAuto},
			Act:       mode == plan.ModeEnabled,
			Templates: templates,
		},
		Release:     testRelease(),
		Writes:      writes,
		HelmRelease: types.NamespacedName{Namespace: "fleet", Name: "cluster-a"},
	}
}

func TestSummarizeVerdicts(t *testing.T) {
	cases := []struct {
		name    string       // what the case proves
		verdict plan.Verdict // the gate's verdict
		want    Summary      // the whole summary
	}{{
		name:    "remove: only Remove, no condition, no event",
		verdict: plan.Verdict{Remove: true},
		want:    Summary{Remove: true, Conclusion: plan.Conclusion{Remove: true, Drifted: plan.UnknownDrift}},
	}, {
		name:    "silent: no condition change, no event, gauge untouched",
		verdict: plan.Verdict{Silent: true},
		want:    Summary{Conclusion: plan.Conclusion{Silent: true, Drifted: plan.UnknownDrift}},
	}, {
		name:    "cluster paused: Normal event",
		verdict: plan.Verdict{Status: metav1.ConditionUnknown, Reason: api.ClusterPausedReason, Message: "waiting: Cluster fleet/a is paused"},
		want: Summary{
			Condition: &metav1.Condition{Type: api.TemplatesInSyncCondition, Status: metav1.ConditionUnknown,
				Reason: api.ClusterPausedReason, Message: "waiting: Cluster fleet/a is paused"},
			Events: []Event{{Type: corev1.EventTypeNormal, Reason: api.TemplateClusterPausedEvent, Message: "waiting: Cluster fleet/a is paused"}},
			// The gauge keeps its last value.
			Conclusion: plan.Conclusion{Status: metav1.ConditionUnknown, Reason: api.ClusterPausedReason, Drifted: plan.UnknownDrift},
		},
	}, {
		name:    "release unavailable: Warning event",
		verdict: plan.Verdict{Status: metav1.ConditionUnknown, Reason: api.ReleaseUnavailableReason, Message: "waiting: stored release is pending-upgrade"},
		want: Summary{
			Condition: &metav1.Condition{Type: api.TemplatesInSyncCondition, Status: metav1.ConditionUnknown,
				Reason: api.ReleaseUnavailableReason, Message: "waiting: stored release is pending-upgrade"},
			Events:     []Event{{Type: corev1.EventTypeWarning, Reason: api.TemplateReleaseUnavailableEvent, Message: "waiting: stored release is pending-upgrade"}},
			Conclusion: plan.Conclusion{Status: metav1.ConditionUnknown, Reason: api.ReleaseUnavailableReason, Drifted: plan.UnknownDrift, Warning: true},
		},
	}, {
		name:    "Helm in flight: Normal event, gauge untouched",
		verdict: plan.Verdict{Status: metav1.ConditionUnknown, Reason: api.ReleaseInProgressReason, Message: "waiting: Helm is acting on the release: v2 is pending-upgrade in storage"},
		want: Summary{
			Condition: &metav1.Condition{Type: api.TemplatesInSyncCondition, Status: metav1.ConditionUnknown,
				Reason: api.ReleaseInProgressReason, Message: "waiting: Helm is acting on the release: v2 is pending-upgrade in storage"},
			Events:     []Event{{Type: corev1.EventTypeNormal, Reason: api.TemplateReleaseInProgressEvent, Message: "waiting: Helm is acting on the release: v2 is pending-upgrade in storage"}},
			Conclusion: plan.Conclusion{Status: metav1.ConditionUnknown, Reason: api.ReleaseInProgressReason, Drifted: plan.UnknownDrift},
		},
	}, {
		name:    "cluster unavailable: Warning event, gauge untouched",
		verdict: plan.Verdict{Status: metav1.ConditionUnknown, Reason: api.ClusterUnavailableReason, Message: "waiting: Cluster fleet/a does not exist"},
		want: Summary{
			Condition: &metav1.Condition{Type: api.TemplatesInSyncCondition, Status: metav1.ConditionUnknown,
				Reason: api.ClusterUnavailableReason, Message: "waiting: Cluster fleet/a does not exist"},
			Events:     []Event{{Type: corev1.EventTypeWarning, Reason: api.TemplateClusterUnavailableEvent, Message: "waiting: Cluster fleet/a does not exist"}},
			Conclusion: plan.Conclusion{Status: metav1.ConditionUnknown, Reason: api.ClusterUnavailableReason, Drifted: plan.UnknownDrift, Warning: true},
		},
	}, {
		name:    "invalid configuration: False, Warning event",
		verdict: plan.Verdict{Status: metav1.ConditionFalse, Reason: api.InvalidConfigurationReason, Message: "invalid configuration: x"},
		want: Summary{
			Condition: &metav1.Condition{Type: api.TemplatesInSyncCondition, Status: metav1.ConditionFalse,
				Reason: api.InvalidConfigurationReason, Message: "invalid configuration: x"},
			Events:     []Event{{Type: corev1.EventTypeWarning, Reason: api.TemplateInvalidConfigurationEvent, Message: "invalid configuration: x"}},
			Conclusion: plan.Conclusion{Status: metav1.ConditionFalse, Reason: api.InvalidConfigurationReason, Drifted: plan.UnknownDrift, Warning: true},
		},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			v := tc.verdict
			// Templates, writes and errors are ignored once a gate stopped the pass.
			res := result(plan.ModeEnabled, 3, tmpl("workers", plan.OutcomeDrifted, inPlace))
			res.Err = errors.New("ignored")
			res.Verdict = &v
			want := tc.want
			want.ReleaseVersion = res.Release.Version // its snapshot gives the events their metadata
			g.Expect(Summarize(res)).To(Equal(want))
		})
	}
}

// wantEvent is an event expected from Summarize.
type wantEvent struct {
	typ, reason string   // event type (a corev1 constant) and reason
	always      bool     // emitted even when the condition did not change
	message     string   // the exact message, when set
	contains    []string // substrings of the message
	absent      []string // text the message must not contain
}

func TestSummarize(t *testing.T) {
	skippedCC := tmpl("cc-workers", plan.OutcomeSkipped, failed("owned by a ClusterClass topology"))
	skippedOpt := tmpl("opted", plan.OutcomeSkipped, failed("opted out"))
	const corrected = "Corrected release fleet/cluster-a.v3: "

	cases := []struct {
		name string           // what the case proves
		res  *pipeline.Result // the pass's result
		want metav1.Condition // Status and Reason; Message is checked by wantMessage and wantContains
		// wantMessage is the exact condition message, when set.
		wantMessage string
		// wantContains are substrings of the condition message.
		wantContains []string
		// wantAbsent is text the condition message must not contain.
		wantAbsent []string
		// wantEvents are the events, in order.
		wantEvents []wantEvent
		// wantDrifted is Conclusion.Drifted.
		wantDrifted int
	}{{
		name: "a template and a consumer of another release, a correction made: False/OwnershipConflict naming both, a Warning, and the correction's event",
		res: func() *pipeline.Result {
			written := func(t *plan.TemplatePlan) { inPlace(t); t.Writes = []plan.Write{plan.WritePatch} }
			r := result(plan.ModeEnabled, 1, tmpl("workers", plan.OutcomeDrifted, written), tmpl("stolen", plan.OutcomeConflict, failed("owned by release fleet/other")))
			r.Conflicts = []plan.Conflict{{ID: manifest.ID{GroupKind: schema.GroupKind{Group: "cluster.x-k8s.io", Kind: "MachineDeployment"}, Namespace: "fleet", Name: "md0"}, Owner: "fleet/other"}}
			return r
		}(),
		want: metav1.Condition{Status: metav1.ConditionFalse, Reason: api.OwnershipConflictReason},
		wantMessage: "Release fleet/cluster-a.v3 names objects another Helm release owns, left untouched: Metal3MachineTemplate/stolen: owned by release fleet/other; " +
			"MachineDeployment/md0: owned by release fleet/other; Metal3MachineTemplate/workers: corrected in place, rolls machines: no",
		wantEvents: []wantEvent{{typ: corev1.EventTypeWarning, reason: api.TemplateOwnershipConflictEvent},
			{typ: corev1.EventTypeNormal, reason: api.TemplateDriftCorrectedEvent, always: true, contains: []string{"workers: corrected in place"}}},
	}, {
		name:        "no drift: True/NoDriftDetected, no event",
		res:         result(plan.ModeEnabled, 0, tmpl("workers", plan.OutcomeInSync, nil), tmpl("data", plan.OutcomeInSync, nil)),
		want:        metav1.Condition{Status: metav1.ConditionTrue, Reason: api.NoDriftDetectedReason},
		wantMessage: "2 templates of release fleet/cluster-a.v3 match the manifest",
	}, {
		name:        "enabled, in-place correction written: True/DriftCorrected; the event always emitted, with the fields changed",
		res:         result(plan.ModeEnabled, 1, tmpl("workers", plan.OutcomeDrifted, inPlace), tmpl("data", plan.OutcomeInSync, nil)),
		want:        metav1.Condition{Status: metav1.ConditionTrue, Reason: api.DriftCorrectedReason},
		wantMessage: corrected + "Metal3MachineTemplate/workers: corrected in place, rolls machines: no",
		wantAbsent:  []string{imageText},
		wantEvents: []wantEvent{{typ: corev1.EventTypeNormal, reason: api.TemplateDriftCorrectedEvent, always: true,
			message: corrected + "Metal3MachineTemplate/workers: corrected in place, rolls machines: no [" + imageText + "]"}},
	}, {
		name:        "enabled, quiet pass after an in-place correction: the same condition, the event only on change",
		res:         result(plan.ModeEnabled, 0, tmpl("workers", plan.OutcomeCorrected, inPlace), tmpl("data", plan.OutcomeInSync, nil)),
		want:        metav1.Condition{Status: metav1.ConditionTrue, Reason: api.DriftCorrectedReason},
		wantMessage: corrected + "Metal3MachineTemplate/workers: corrected in place, rolls machines: no",
		wantEvents: []wantEvent{{typ: corev1.EventTypeNormal, reason: api.TemplateDriftCorrectedEvent,
			message: corrected + "Metal3MachineTemplate/workers: corrected in place, rolls machines: no"}},
	}, {
		name:        "warn mode drift: False/DriftDetected, would in-place, Warning event",
		res:         result(plan.ModeWarn, 0, tmpl("workers", plan.OutcomeDrifted, inPlace)),
		want:        metav1.Condition{Status: metav1.ConditionFalse, Reason: api.DriftDetectedReason},
		wantMessage: "Drift in release fleet/cluster-a.v3: Metal3MachineTemplate/workers: would in-place, rolls machines: no [" + imageText + "]",
		wantEvents:  []wantEvent{{typ: corev1.EventTypeWarning, reason: api.TemplateDriftDetectedEvent}},
		wantDrifted: 1,
	}, {
		name:        "warn mode rotate: would rotate to the replacement, rolls machines",
		res:         result(plan.ModeWarn, 0, tmpl("workers", plan.OutcomeDrifted, rotated)),
		want:        metav1.Condition{Status: metav1.ConditionFalse, Reason: api.DriftDetectedReason},
		wantMessage: "Drift in release fleet/cluster-a.v3: Metal3MachineTemplate/workers: would rotate to " + replacement + ", rolls machines: yes [" + imageText + "]",
		wantEvents:  []wantEvent{{typ: corev1.EventTypeWarning, reason: api.TemplateDriftDetectedEvent}},
		wantDrifted: 1,
	}, {
		name:        "enabled rotation written",
		res:         result(plan.ModeEnabled, 2, tmpl("workers", plan.OutcomeDrifted, rotated)),
		want:        metav1.Condition{Status: metav1.ConditionTrue, Reason: api.DriftCorrectedReason},
		wantMessage: corrected + "Metal3MachineTemplate/workers: rotated to " + replacement + ", rolls machines: yes",
		wantEvents: []wantEvent{{typ: corev1.EventTypeNormal, reason: api.TemplateDriftCorrectedEvent, always: true,
			contains: []string{"rotated to " + replacement + ", rolls machines: yes [" + imageText + "]"}}},
	}, {
		name:        "enabled recreate written, which does not roll",
		res:         result(plan.ModeEnabled, 2, tmpl("workers", plan.OutcomeDrifted, recreated)),
		want:        metav1.Condition{Status: metav1.ConditionTrue, Reason: api.DriftCorrectedReason},
		wantMessage: corrected + "Metal3MachineTemplate/workers: recreated, rolls machines: no",
		wantEvents: []wantEvent{{typ: corev1.EventTypeNormal, reason: api.TemplateDriftCorrectedEvent, always: true,
			contains: []string{"recreated, rolls machines: no [" + imageText + "]"}}},
	}, {
		name: "Err set: False/CorrectionFailed with the error",
		res: func() *pipeline.Result {
			r := result(plan.ModeEnabled, 1, tmpl("workers", plan.OutcomeDrifted, inPlace))
			r.Err = errors.New("admission webhook denied the request")
			return r
		}(),
		want:        metav1.Condition{Status: metav1.ConditionFalse, Reason: api.CorrectionFailedReason},
		wantMessage: "Correction of release fleet/cluster-a.v3 failed: admission webhook denied the request",
		wantEvents:  []wantEvent{{typ: corev1.EventTypeWarning, reason: api.TemplateDriftCorrectionFailedEvent, contains: []string{"admission webhook denied the request"}}},
		wantDrifted: 1, // the failed write may have left the template drifted
	}, {
		name:        "enabled, template failed: False/CorrectionFailed listing the failure",
		res:         result(plan.ModeEnabled, 0, tmpl("workers", plan.OutcomeFailed, failed("in-place correction refused: field is immutable"))),
		want:        metav1.Condition{Status: metav1.ConditionFalse, Reason: api.CorrectionFailedReason},
		wantMessage: "Correction of release fleet/cluster-a.v3 failed: Metal3MachineTemplate/workers: in-place correction refused: field is immutable",
		wantEvents:  []wantEvent{{typ: corev1.EventTypeWarning, reason: api.TemplateDriftCorrectionFailedEvent}},
		wantDrifted: 1,
	}, {
		name:        "warn, template failed: reported as drift, not as a failed correction",
		res:         result(plan.ModeWarn, 0, tmpl("workers", plan.OutcomeFailed, failed("in-place correction refused: field is immutable"))),
		want:        metav1.Condition{Status: metav1.ConditionFalse, Reason: api.DriftDetectedReason},
		wantMessage: "Drift in release fleet/cluster-a.v3: Metal3MachineTemplate/workers: in-place correction refused: field is immutable",
		wantEvents:  []wantEvent{{typ: corev1.EventTypeWarning, reason: api.TemplateDriftDetectedEvent}},
		wantDrifted: 1,
	}, {
		name:        "enabled, missing template recreated",
		res:         result(plan.ModeEnabled, 1, tmpl("workers", plan.OutcomeMissing, recreated)),
		want:        metav1.Condition{Status: metav1.ConditionTrue, Reason: api.DriftCorrectedReason},
		wantMessage: corrected + "Metal3MachineTemplate/workers: recreated, rolls machines: no",
		// A missing template has no fields to list.
		wantEvents: []wantEvent{{typ: corev1.EventTypeNormal, reason: api.TemplateDriftCorrectedEvent, always: true,
			message: corrected + "Metal3MachineTemplate/workers: recreated, rolls machines: no"}},
	}, {
		name:        "warn, missing template: would recreate, counted as drifted",
		res:         result(plan.ModeWarn, 0, tmpl("workers", plan.OutcomeMissing, recreated)),
		want:        metav1.Condition{Status: metav1.ConditionFalse, Reason: api.DriftDetectedReason},
		wantMessage: "Drift in release fleet/cluster-a.v3: Metal3MachineTemplate/workers: missing, would recreate from the manifest, rolls machines: no",
		wantEvents:  []wantEvent{{typ: corev1.EventTypeWarning, reason: api.TemplateDriftDetectedEvent}},
		wantDrifted: 1,
	}, {
		name:        "enabled, template being deleted: drift detected while waiting",
		res:         result(plan.ModeEnabled, 0, tmpl("workers", plan.OutcomeWaiting, nil)),
		want:        metav1.Condition{Status: metav1.ConditionFalse, Reason: api.DriftDetectedReason},
		wantMessage: "Drift in release fleet/cluster-a.v3: Metal3MachineTemplate/workers: waiting for deletion to finish",
		wantEvents:  []wantEvent{{typ: corev1.EventTypeWarning, reason: api.TemplateDriftDetectedEvent}},
		wantDrifted: 1,
	}, {
		name: "skipped templates are listed after the corrections",
		res:  result(plan.ModeEnabled, 1, skippedCC, tmpl("workers", plan.OutcomeDrifted, inPlace), skippedOpt),
		want: metav1.Condition{Status: metav1.ConditionTrue, Reason: api.DriftCorrectedReason},
		wantMessage: corrected + "Metal3MachineTemplate/workers: corrected in place, rolls machines: no" +
			". Skipped: Metal3MachineTemplate/cc-workers (owned by a ClusterClass topology), Metal3MachineTemplate/opted (opted out)",
		wantEvents: []wantEvent{{typ: corev1.EventTypeNormal, reason: api.TemplateDriftCorrectedEvent, always: true,
			contains: []string{"Metal3MachineTemplate/workers: corrected in place, rolls machines: no [" + imageText + "]",
				". Skipped: Metal3MachineTemplate/cc-workers (owned by a ClusterClass topology), Metal3MachineTemplate/opted (opted out)"}}},
	}, {
		name:        "skipped templates on a pass without drift, not counted as checked",
		res:         result(plan.ModeWarn, 0, tmpl("workers", plan.OutcomeInSync, nil), skippedOpt),
		want:        metav1.Condition{Status: metav1.ConditionTrue, Reason: api.NoDriftDetectedReason},
		wantMessage: "1 templates of release fleet/cluster-a.v3 match the manifest. Skipped: Metal3MachineTemplate/opted (opted out)",
	}, {
		name: "warn: a rotation done by an earlier release is noted as superseded, not as a rotation to do",
		res: result(plan.ModeWarn, 0, tmpl("workers", plan.OutcomeSuperseded, both(rotated, withChanges)),
			tmpl("data", plan.OutcomeInSync, nil)),
		want: metav1.Condition{Status: metav1.ConditionTrue, Reason: api.NoDriftDetectedReason},
		wantMessage: "2 templates of release fleet/cluster-a.v3 match the manifest. Superseded earlier: Metal3MachineTemplate/workers by " +
			replacement,
		wantAbsent: []string{"would rotate", imageText},
	}, {
		name: "enabled: the same note for a superseded template, and no event",
		res: result(plan.ModeEnabled, 0, tmpl("workers", plan.OutcomeSuperseded, both(rotated, withChanges)),
			tmpl("data", plan.OutcomeInSync, nil)),
		want:         metav1.Condition{Status: metav1.ConditionTrue, Reason: api.NoDriftDetectedReason},
		wantContains: []string{". Superseded earlier: Metal3MachineTemplate/workers by " + replacement},
		wantAbsent:   []string{"rotated to", imageText},
	}, {
		name:        "a rotation done for this release reads as the rotation, on every quiet pass",
		res:         result(plan.ModeEnabled, 0, tmpl("workers", plan.OutcomeCorrected, both(rotated, withChanges))),
		want:        metav1.Condition{Status: metav1.ConditionTrue, Reason: api.DriftCorrectedReason},
		wantMessage: corrected + "Metal3MachineTemplate/workers: rotated to " + replacement + ", rolls machines: yes",
		wantEvents:  []wantEvent{{typ: corev1.EventTypeNormal, reason: api.TemplateDriftCorrectedEvent}},
	}, {
		name: "reverted reference with writes: Warning TemplateReferenceReverted after the correction event",
		res: result(plan.ModeEnabled, 1, tmpl("workers", plan.OutcomeDrifted, both(rotated, func(t *plan.TemplatePlan) {
			t.Rotation.Reverted = true
		}))),
		want: metav1.Condition{Status: metav1.ConditionTrue, Reason: api.DriftCorrectedReason},
		wantEvents: []wantEvent{
			{typ: corev1.EventTypeNormal, reason: api.TemplateDriftCorrectedEvent, always: true},
			{typ: corev1.EventTypeWarning, reason: api.TemplateReferenceRevertedEvent, always: true,
				message: "A reference to Metal3MachineTemplate/fleet/workers was set back (by Helm or a person) and repointed to " + replacement + " again"},
		},
	}, {
		name: "reverted without writes (warn mode): no reverted event",
		res: result(plan.ModeWarn, 0, tmpl("workers", plan.OutcomeDrifted, both(rotated, func(t *plan.TemplatePlan) {
			t.Rotation.Reverted = true
		}))),
		want:        metav1.Condition{Status: metav1.ConditionFalse, Reason: api.DriftDetectedReason},
		wantEvents:  []wantEvent{{typ: corev1.EventTypeWarning, reason: api.TemplateDriftDetectedEvent}},
		wantDrifted: 1,
	}, {
		name: "reverted reference, but a write failed before the consumers were repointed: no reverted event",
		res: func() *pipeline.Result {
			r := result(plan.ModeEnabled, 1, tmpl("workers", plan.OutcomeDrifted, both(rotated, func(t *plan.TemplatePlan) {
				t.Rotation.Reverted = true
			})))
			r.Err = errors.New("failed to create Metal3MachineTemplate fleet/workers-x: boom")
			return r
		}(),
		want:        metav1.Condition{Status: metav1.ConditionFalse, Reason: api.CorrectionFailedReason},
		wantEvents:  []wantEvent{{typ: corev1.EventTypeWarning, reason: api.TemplateDriftCorrectionFailedEvent}},
		wantDrifted: 1,
	}, {
		name: "the event of a pass that wrote lists an earlier rotation without the original's old drift",
		res: result(plan.ModeEnabled, 1, tmpl("workers", plan.OutcomeCorrected, both(rotated, withChanges)),
			tmpl("cp", plan.OutcomeDrifted, inPlace)),
		want: metav1.Condition{Status: metav1.ConditionTrue, Reason: api.DriftCorrectedReason},
		wantEvents: []wantEvent{{typ: corev1.EventTypeNormal, reason: api.TemplateDriftCorrectedEvent, always: true,
			contains: []string{"Metal3MachineTemplate/workers: rotated to " + replacement + ", rolls machines: yes; Metal3MachineTemplate/cp: corrected in place, rolls machines: no ["}}},
	}, {
		name: "a rollout awaits approval, an in-place heal made: False/RolloutAwaitingApproval naming the consumer, its Machines, the id and the command; a Warning",
		res: func() *pipeline.Result {
			written := func(t *plan.TemplatePlan) { inPlace(t); t.Writes = []plan.Write{plan.WritePatch} }
			r := result(plan.ModeEnabled, 1, tmpl("workers", plan.OutcomeAwaitingRollout, awaitingRollout(plan.RolloutAwaitingApproval)),
				tmpl("data", plan.OutcomeDrifted, written))
			r.Approvals = []plan.Approval{{ID: "aaaaaaaaaa", State: plan.ApprovalStale}}
			return r
		}(),
		want: metav1.Condition{Status: metav1.ConditionFalse, Reason: api.RolloutAwaitingApprovalReason},
		wantMessage: "Corrections of release fleet/cluster-a.v3 would roll Machines and wait for approval: " +
			"Metal3MachineTemplate/workers: waits for approval of rollout 0123456789: would rotate to " + replacement +
			", replacing the Machines of MachineDeployment fleet/md0 (2 Machines); Metal3MachineTemplate/data: corrected in place, rolls machines: no. " +
			"Approve with: kubectl -n fleet annotate helmrelease cluster-a templatedrift.io/approve-rollout=0123456789 --overwrite. " +
			"Stale approvals, which roll nothing (no rollout of the release has these ids; the chart or the live objects changed since): aaaaaaaaaa",
		wantEvents: []wantEvent{{typ: corev1.EventTypeWarning, reason: api.TemplateRolloutAwaitingApprovalEvent},
			{typ: corev1.EventTypeNormal, reason: api.TemplateDriftCorrectedEvent, always: true, contains: []string{"data: corrected in place"}}},
		wantDrifted: 1,
	}, {
		name:         "a rollout waits for the budget: False/RolloutBudgetExhausted, a Normal event",
		res:          result(plan.ModeEnabled, 0, tmpl("workers", plan.OutcomeAwaitingRollout, awaitingRollout(plan.RolloutAwaitingBudget))),
		want:         metav1.Condition{Status: metav1.ConditionFalse, Reason: api.RolloutBudgetExhaustedReason},
		wantContains: []string{"rollout 0123456789 may be made and waits for the rollout budget", "MachineDeployment fleet/md0 (2 Machines)"},
		wantEvents:   []wantEvent{{typ: corev1.EventTypeNormal, reason: api.TemplateRolloutBudgetExhaustedEvent}},
		wantDrifted:  1,
	}, {
		name: "an approved rollout made earlier: True, and the approval reported made",
		res: func() *pipeline.Result {
			r := result(plan.ModeEnabled, 0, tmpl("workers", plan.OutcomeCorrected, rotated))
			r.Approvals = []plan.Approval{{ID: "0123456789", State: plan.ApprovalDone}}
			return r
		}(),
		want:        metav1.Condition{Status: metav1.ConditionTrue, Reason: api.DriftCorrectedReason},
		wantMessage: corrected + "Metal3MachineTemplate/workers: rotated to " + replacement + ", rolls machines: yes. Approved rollouts made: 0123456789",
		wantEvents:  []wantEvent{{typ: corev1.EventTypeNormal, reason: api.TemplateDriftCorrectedEvent}},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			out := Summarize(tc.res)

			g.Expect(out.Remove).To(BeFalse())
			g.Expect(out.Conclusion.Drifted).To(Equal(tc.wantDrifted))
			g.Expect(out.Conclusion.Status).To(Equal(tc.want.Status))
			g.Expect(out.Conclusion.Reason).To(Equal(tc.want.Reason))

			g.Expect(out.Condition).NotTo(BeNil())
			c := *out.Condition
			g.Expect(c.Type).To(Equal(api.TemplatesInSyncCondition))
			g.Expect(c.Status).To(Equal(tc.want.Status))
			g.Expect(c.Reason).To(Equal(tc.want.Reason))
			g.Expect(c.ObservedGeneration).To(BeZero(), "Write sets the generation")
			g.Expect(c.LastTransitionTime.IsZero()).To(BeTrue(), "Write sets the time")
			if tc.wantMessage != "" {
				g.Expect(c.Message).To(Equal(tc.wantMessage))
			}
			for _, s := range tc.wantContains {
				g.Expect(c.Message).To(ContainSubstring(s))
			}
			for _, s := range tc.wantAbsent {
				g.Expect(c.Message).NotTo(ContainSubstring(s))
			}

			g.Expect(out.Events).To(HaveLen(len(tc.wantEvents)))
			for i, w := range tc.wantEvents {
				e := out.Events[i]
				g.Expect(e.Type).To(Equal(w.typ), "event %d", i)
				g.Expect(e.Reason).To(Equal(w.reason), "event %d", i)
				g.Expect(e.Always).To(Equal(w.always), "event %d", i)
				if w.message != "" {
					g.Expect(e.Message).To(Equal(w.message), "event %d", i)
				}
				for _, s := range w.contains {
					g.Expect(e.Message).To(ContainSubstring(s), "event %d", i)
				}
				for _, s := range w.absent {
					g.Expect(e.Message).NotTo(ContainSubstring(s), "event %d", i)
				}
			}
			// The event reporting a state other than a correction carries
			// the condition's text.
			if len(out.Events) > 0 && c.Reason != api.DriftCorrectedReason {
				g.Expect(out.Events[0].Message).To(Equal(c.Message))
			}
			// An event is Always only on a pass that wrote.
			for _, e := range out.Events {
				if tc.res.Writes == 0 {
					g.Expect(e.Always).To(BeFalse())
				}
			}
		})
	}
}

// TestSummarizeSameConditionAfterCorrection proves the property that
// replaced keeping the previous condition: the pass that corrects and the
// quiet pass after it (the template now carries the record of the
// correction, so the plan reads it as Corrected) produce the same
// condition, so Write sees no change and emits no event again; only the
// pass that wrote carries an Always TemplateDriftCorrected event, with the
// fields it changed.
func TestSummarizeSameConditionAfterCorrection(t *testing.T) {
	cases := []struct {
		name string // the strategy
		// correcting is the template on the pass that writes: Drifted, with
		// the writes it needs.
		correcting plan.TemplatePlan
		// writes is the number of writes of that pass.
		writes int
		// quiet is the same template on the next pass: Corrected, no writes.
		quiet plan.TemplatePlan
		// wantLine is the template's line in both condition messages.
		wantLine string
	}{{
		name: "in place",
		correcting: tmpl("workers", plan.OutcomeDrifted, both(inPlace, func(t *plan.TemplatePlan) {
			t.Writes = []plan.Write{plan.WritePatch}
		})),
		writes:   1,
		quiet:    tmpl("workers", plan.OutcomeCorrected, inPlace),
		wantLine: "Metal3MachineTemplate/workers: corrected in place, rolls machines: no",
	}, {
		name: "rotation",
		correcting: tmpl("workers", plan.OutcomeDrifted, both(rotated, func(t *plan.TemplatePlan) {
			t.Writes = []plan.Write{plan.WriteCreateReplacement, plan.WriteMarkSuperseded}
		})),
		writes: 3, // create, repoint, mark
		// The original keeps its drift: it is history, not work.
		quiet:    tmpl("workers", plan.OutcomeCorrected, both(rotated, withChanges)),
		wantLine: "Metal3MachineTemplate/workers: rotated to " + replacement + ", rolls machines: yes",
	}, {
		name: "recreate",
		correcting: tmpl("workers", plan.OutcomeDrifted, both(recreated, func(t *plan.TemplatePlan) {
			t.Writes = []plan.Write{plan.WriteDelete, plan.WriteCreate}
		})),
		writes:   2,
		quiet:    tmpl("workers", plan.OutcomeCorrected, recreated),
		wantLine: "Metal3MachineTemplate/workers: recreated, rolls machines: no",
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			first := Summarize(result(plan.ModeEnabled, tc.writes, tc.correcting, tmpl("data", plan.OutcomeInSync, nil)))
			next := Summarize(result(plan.ModeEnabled, 0, tc.quiet, tmpl("data", plan.OutcomeInSync, nil)))

			g.Expect(first.Condition).NotTo(BeNil())
			g.Expect(*first.Condition).To(Equal(metav1.Condition{Type: api.TemplatesInSyncCondition, Status: metav1.ConditionTrue,
				Reason: api.DriftCorrectedReason, Message: "Corrected release fleet/cluster-a.v3: " + tc.wantLine}))
			g.Expect(next.Condition).To(Equal(first.Condition), "the quiet pass reads the same as the correcting one")

			// The correcting pass: one Always event, with the field it changed.
			g.Expect(first.Events).To(HaveLen(1))
			g.Expect(first.Events[0]).To(Equal(Event{Type: corev1.EventTypeNormal, Reason: api.TemplateDriftCorrectedEvent, Always: true,
				Message: "Corrected release fleet/cluster-a.v3: " + tc.wantLine + " [" + imageText + "]"}))
			// The quiet pass: no Always event.
			for _, e := range next.Events {
				g.Expect(e.Always).To(BeFalse())
			}
			g.Expect(first.Conclusion.Corrections).To(Equal([]plan.Correction{{Kind: m3mtKind.Kind, Strategy: tc.correcting.Strategy}}))
			g.Expect(next.Conclusion.Corrections).To(BeNil(), "a quiet pass counts no correction")

			// On the HelmRelease: the first pass sets the condition, the
			// quiet pass changes nothing, so Write emits no event again.
			hr := newHelmRelease(4, ready)
			g.Expect(setCondition(hr, first)).To(BeTrue())
			after := hr.DeepCopy()
			g.Expect(setCondition(hr, next)).To(BeFalse())
			g.Expect(hr).To(Equal(after))
		})
	}
}

func TestSummarizeTruncatesLongMessages(t *testing.T) {
	g := NewWithT(t)
	// Multi-byte runes: the cut must count runes, not bytes.
	long := strings.Repeat("ü", 2*maxMessageRunes)
	res := result(plan.ModeEnabled, 0, tmpl("workers", plan.OutcomeFailed, failed("in-place correction refused: "+long)))
	out := Summarize(res)
	g.Expect(out.Condition).NotTo(BeNil())
	msg := out.Condition.Message
	g.Expect(utf8.ValidString(msg)).To(BeTrue())
	g.Expect(utf8.RuneCountInString(msg)).To(Equal(maxMessageRunes + 1))
	g.Expect(msg).To(HaveSuffix("…"))
	g.Expect(msg).To(HavePrefix("Correction of release fleet/cluster-a.v3 failed: Metal3MachineTemplate/workers: in-place correction refused: üü"))
	// The event is cut to its own, lower, limit.
	g.Expect(out.Events).To(HaveLen(1))
	g.Expect(utf8.ValidString(out.Events[0].Message)).To(BeTrue())
	g.Expect(utf8.RuneCountInString(out.Events[0].Message)).To(Equal(maxEventRunes + 1))
	g.Expect(out.Events[0].Message).To(HaveSuffix("…"))

	// A message at the limit is kept whole.
	prefix := "Correction of release fleet/cluster-a.v3 failed: Metal3MachineTemplate/workers: "
	exact := strings.Repeat("é", maxMessageRunes-utf8.RuneCountInString(prefix))
	out = Summarize(result(plan.ModeEnabled, 0, tmpl("workers", plan.OutcomeFailed, failed(exact))))
	g.Expect(out.Condition.Message).To(Equal(prefix + exact))

	// One rune more is cut.
	out = Summarize(result(plan.ModeEnabled, 0, tmpl("workers", plan.OutcomeFailed, failed(exact+"x"))))
	g.Expect(out.Condition.Message).To(Equal(prefix + exact + "…"))
}

func TestSummarizeCountsDrifted(t *testing.T) {
	cases := []struct {
		name string    // what the case proves
		mode plan.Mode // the release's mode
		want int       // Conclusion.Drifted
	}{
		{name: "warn counts every template that differs: drifted, failed, waiting, missing", mode: plan.ModeWarn, want: 4},
		{name: "enabled counts only failed and waiting templates", mode: plan.ModeEnabled, want: 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := result(tc.mode, 0,
				tmpl("a", plan.OutcomeDrifted, inPlace),
				tmpl("b", plan.OutcomeFailed, failed("refused")),
				tmpl("c", plan.OutcomeWaiting, nil),
				tmpl("d", plan.OutcomeMissing, recreated),
				tmpl("e", plan.OutcomeInSync, nil),
				tmpl("f", plan.OutcomeSkipped, failed("opted out")),
				tmpl("g", plan.OutcomeSuperseded, both(rotated, withChanges)),
				tmpl("h", plan.OutcomeCorrected, inPlace),
			)
			NewWithT(t).Expect(Summarize(res).Conclusion.Drifted).To(Equal(tc.want))
		})
	}
}
