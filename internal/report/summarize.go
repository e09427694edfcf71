package report

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/diff"
	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/pipeline"
	"github.com/templatedrift/template-drift-controller/internal/plan"
)

// Message limits keep conditions readable and events under the API limits.
const (
	maxMessageRunes = 3000
	// maxEventRunes keeps event notes under the events.k8s.io limit (1024 bytes
	// of note is the API's; runes are counted conservatively below it).
	maxEventRunes = 1000
)

// Summary is what the reporter writes for a pass.
type Summary struct {
	// Condition is the TemplatesInSync condition to set (Type is always
	// TemplatesInSyncCondition); nil with Remove false leaves it untouched.
	Condition *metav1.Condition
	// Remove asks to remove the condition (the release opted out).
	Remove bool
	// Events to emit if the condition changed (or, for Always, in any case).
	Events []Event
	// Conclusion is the plan's, for the metrics, with the replacements the
	// pass deleted.
	Conclusion plan.Conclusion
	Pruned     []manifest.ID
	// ReleaseVersion is the version of the stored release the pass worked
	// from (0 when it read none): its status.history snapshot gives the
	// events their metadata.
	ReleaseVersion int
}

// Event is one event on the HelmRelease.
type Event struct {
	// Type is corev1.EventTypeNormal or corev1.EventTypeWarning.
	Type, Reason, Message string
	// Always is true for events about writes made in this pass, which are
	// emitted even if the condition text did not change.
	Always bool
}

// Summarize formats a pass: the plan's conclusion as the condition and its
// event, the plan's announcements as their events, and one line per
// template from its outcome. It decides nothing.
func Summarize(res *pipeline.Result) Summary {
	c := plan.Conclude(res.Decisions, res.Err, res.Writes)
	out := Summary{Conclusion: c, Remove: c.Remove, Pruned: res.Pruned}
	if res.Release != nil {
		out.ReleaseVersion = res.Release.Version
	}
	if c.Remove || c.Silent {
		return out
	}
	if v := res.Verdict; v != nil {
		out.set(c, v.Message)
		out.event(eventType(c), api.EventReason(v.Reason), out.Condition.Message, false)
		return out
	}
	ref := res.Release.Ref()
	lines := describe(res, false)
	notes := describeNotes(res)
	switch c.Reason {
	case api.CorrectionBlockedReason:
		out.set(c, fmt.Sprintf("Correction of release %s blocked: %s", ref, strings.Join(lines, "; "))+notes)
		out.event(eventType(c), api.TemplateCorrectionBlockedEvent, out.Condition.Message, false)
	case api.OwnershipConflictReason:
		out.set(c, fmt.Sprintf("Release %s names objects another Helm release owns, left untouched: %s", ref, strings.Join(append(conflicts(res), lines...), "; "))+notes)
		out.event(eventType(c), api.TemplateOwnershipConflictEvent, out.Condition.Message, false)
	case api.RolloutAwaitingApprovalReason:
		out.set(c, fmt.Sprintf("Corrections of release %s would roll Machines and wait for approval: %s. %s",
			ref, strings.Join(lines, "; "), approveCommand(res))+notes)
		out.event(eventType(c), api.TemplateRolloutAwaitingApprovalEvent, out.Condition.Message, false)
	case api.RolloutBudgetExhaustedReason:
		out.set(c, fmt.Sprintf("Corrections of release %s would roll Machines while other releases roll out as many as --max-concurrent-rollouts allows; they start when one ends: %s",
			ref, strings.Join(lines, "; "))+notes)
		out.event(eventType(c), api.EventReason(c.Reason), out.Condition.Message, false)
	case api.CorrectionFailedReason:
		msg := strings.Join(lines, "; ")
		if res.Err != nil {
			msg = res.Err.Error()
		}
		out.set(c, fmt.Sprintf("Correction of release %s failed: %s", ref, msg)+notes)
		out.event(eventType(c), api.TemplateDriftCorrectionFailedEvent, out.Condition.Message, false)
	case api.DriftDetectedReason:
		out.set(c, fmt.Sprintf("Drift in release %s: %s", ref, strings.Join(lines, "; "))+notes)
		out.event(eventType(c), api.TemplateDriftDetectedEvent, out.Condition.Message, false)
	case api.DriftCorrectedReason:
		out.set(c, fmt.Sprintf("Corrected release %s: %s", ref, strings.Join(lines, "; "))+notes)
		// The event of the pass that wrote carries the fields it changed.
		detail := fmt.Sprintf("Corrected release %s: %s", ref, strings.Join(describe(res, true), "; ")) + notes
		out.event(eventType(c), api.TemplateDriftCorrectedEvent, detail, res.Writes > 0)
	default:
		out.set(c, fmt.Sprintf("%d templates of release %s match the manifest", c.Checked, ref)+notes)
	}
	a := plan.Announce(res.Decisions, c, res.Writes, res.Err, len(res.Pruned))
	if made := corrections(res); a.Corrections && len(made) > 0 {
		out.event(corev1.EventTypeNormal, api.TemplateDriftCorrectedEvent,
			fmt.Sprintf("Corrected release %s: %s", ref, strings.Join(made, "; ")), true)
	}
	if a.Pruned {
		out.event(corev1.EventTypeNormal, api.TemplatePrunedEvent,
			fmt.Sprintf("Deleted unused replacements of release %s: %s", ref, plan.IDs(res.Pruned)), true)
	}
	for _, t := range a.Reverted {
		out.event(corev1.EventTypeWarning, api.TemplateReferenceRevertedEvent,
			fmt.Sprintf("A reference to %s was set back (by Helm or a person) and repointed to %s again", t.ID, t.RenameTo()), true)
	}
	return out
}

// eventType is the event type plan decided for the condition's event.
func eventType(c plan.Conclusion) string {
	if c.Warning {
		return corev1.EventTypeWarning
	}
	return corev1.EventTypeNormal
}

// set records the condition, its message cut to maxMessageRunes.
func (o *Summary) set(c plan.Conclusion, msg string) {
	o.Condition = &metav1.Condition{Type: api.TemplatesInSyncCondition, Status: c.Status, Reason: c.Reason, Message: truncate(msg, maxMessageRunes)}
}

// event records an event, its message cut to the events.k8s.io limit.
func (o *Summary) event(typ, reason, msg string, always bool) {
	o.Events = append(o.Events, Event{Type: typ, Reason: reason, Message: truncate(msg, maxEventRunes), Always: always})
}

func truncate(msg string, limit int) string {
	if r := []rune(msg); len(r) > limit {
		return string(r[:limit]) + "…"
	}
	return msg
}

// describe renders one line per template that is not simply in sync
// (plan.Describe). A correction reads the same on the pass that makes it
// and on every pass after it, so a steady state writes no new condition;
// detail adds the fields changed, for the event of the pass that wrote. A
// drift left as it is always names its fields.
func describe(res *pipeline.Result, detail bool) []string {
	var lines []string
	for _, t := range res.Templates {
		line, ok := plan.Describe(t, res.Act)
		if !ok {
			continue
		}
		line = t.ID.Kind + "/" + t.ID.Name + ": " + line
		leftDrifted := !res.Act && t.Outcome == plan.OutcomeDrifted && !t.Restored && !t.ConsumersBehind()
		if len(t.Changes) > 0 && (leftDrifted || (detail && res.Act && acts(t))) {
			line += " [" + diff.Summary(t.Changes, diff.SummaryMaxValue, diff.SummaryMaxChanges) + "]"
		}
		lines = append(lines, line)
	}
	return lines
}

// acts reports whether a template's line is what a pass acting on it did.
func acts(t plan.TemplatePlan) bool {
	return t.Outcome == plan.OutcomeDrifted || t.Outcome == plan.OutcomeMissing
}

// conflicts names the templates and consumers of the manifest that another
// Helm release owns, with that release, templates first.
func conflicts(res *pipeline.Result) []string {
	var out []string
	for _, t := range res.Templates {
		if t.Outcome == plan.OutcomeConflict {
			out = append(out, t.ID.Kind+"/"+t.ID.Name+": "+t.Message)
		}
	}
	for _, c := range res.Conflicts {
		out = append(out, c.ID.Kind+"/"+c.ID.Name+": owned by release "+c.Owner)
	}
	return out
}

// corrections renders, with the fields changed, one line per template the
// pass corrected (plan.Decisions.Corrects; the event is sent only when its
// writes were made).
func corrections(res *pipeline.Result) []string {
	var lines []string
	for _, t := range res.Templates {
		if !res.Corrects(t) {
			continue
		}
		line, _ := plan.Describe(t, true)
		line = t.ID.Kind + "/" + t.ID.Name + ": " + line
		if len(t.Changes) > 0 {
			line += " [" + diff.Summary(t.Changes, diff.SummaryMaxValue, diff.SummaryMaxChanges) + "]"
		}
		lines = append(lines, line)
	}
	return lines
}

// describeNotes names the templates healed by an earlier release's
// rotation, and those left alone and why (not owned by the release, opted
// out, owned by a ClusterClass), so a user sees what the add-on did not
// check.
func describeNotes(res *pipeline.Result) string {
	var superseded, skipped []string
	for _, t := range res.Templates {
		switch t.Outcome {
		case plan.OutcomeSkipped:
			skipped = append(skipped, t.ID.Kind+"/"+t.ID.Name+" ("+t.Message+")")
		case plan.OutcomeSuperseded:
			superseded = append(superseded, t.ID.Kind+"/"+t.ID.Name+" by "+t.RenameTo())
		}
	}
	var b strings.Builder
	if len(superseded) > 0 {
		b.WriteString(". Superseded earlier: " + strings.Join(superseded, ", "))
	}
	if len(skipped) > 0 {
		b.WriteString(". Skipped: " + strings.Join(skipped, ", "))
	}
	b.WriteString(approvalNotes(res.Approvals))
	if len(res.Pruned) > 0 {
		b.WriteString(pruneNote + plan.IDs(res.Pruned))
	}
	return b.String()
}

// approvalNotes says what became of the approved rollout ids: made (this
// pass or earlier), waiting for the budget, or stale.
func approvalNotes(approvals []plan.Approval) string {
	var made, waiting, stale []string
	for _, a := range approvals {
		switch a.State {
		case plan.ApprovalStale:
			stale = append(stale, a.ID)
		case plan.ApprovalWaiting:
			waiting = append(waiting, a.ID)
		default:
			made = append(made, a.ID)
		}
	}
	var b strings.Builder
	if len(made) > 0 {
		b.WriteString(". Approved rollouts made: " + strings.Join(made, ", "))
	}
	if len(waiting) > 0 {
		b.WriteString(". Approved rollouts waiting for the budget: " + strings.Join(waiting, ", "))
	}
	if len(stale) > 0 {
		b.WriteString(". Stale approvals, which roll nothing (no rollout of the release has these ids; the chart or the live objects changed since): " +
			strings.Join(stale, ", "))
	}
	return b.String()
}

// approveCommand is the command that approves every rollout of the release
// waiting for approval.
func approveCommand(res *pipeline.Result) string {
	var ids []string
	for _, t := range res.Templates {
		if t.Outcome == plan.OutcomeAwaitingRollout && t.Rollout.State == plan.RolloutAwaitingApproval {
			ids = append(ids, t.Rollout.ID)
		}
	}
	return fmt.Sprintf("Approve with: kubectl -n %s annotate helmrelease %s %s=%s --overwrite",
		res.HelmRelease.Namespace, res.HelmRelease.Name, api.ApproveRolloutAnnotation, strings.Join(ids, ","))
}

// pruneNote starts the clean-up note, always the last part of a message.
const pruneNote = ". Deleted unused replacements: "

// withoutPruneNote cuts the clean-up note off a condition message.
func withoutPruneNote(msg string) string {
	if i := strings.Index(msg, pruneNote); i >= 0 {
		return msg[:i]
	}
	return msg
}
