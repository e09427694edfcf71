package report

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/apply"
	"github.com/templatedrift/template-drift-controller/internal/diff"
	"github.com/templatedrift/template-drift-controller/internal/plan"
)

// Message limits keep conditions readable and events under the API limits.
const (
	maxValueRunes   = 60
	maxPathsPerItem = 4
	maxMessageRunes = 3000
	// maxEventRunes keeps event notes under the events.k8s.io limit (1024 bytes
	// of note is the API's; runes are counted conservatively below it).
	maxEventRunes = 1000
)

// unknownDrift marks an Outcome whose pass did not compare templates, so the
// drifted-templates gauge keeps its last value.
const unknownDrift = -1

// Outcome is what the reporter should make of a pass.
type Outcome struct {
	// Condition is the TemplatesInSync condition to set (Type is always
	// TemplatesInSyncCondition); nil with Remove false leaves it untouched.
	Condition *metav1.Condition
	// Remove asks to remove the condition (the release opted out).
	Remove bool
	// Events to emit if the condition changed (or writes happened).
	Events []Event
	// Drifted counts templates that differ from the manifest and are not
	// healed by a rotation, for the gauge.
	Drifted int
	// Wrote is true when the pass wrote to the cluster; ReleaseRef names the
	// release it worked from. Together they let Write keep a DriftCorrected
	// condition on the quiet passes that follow a correction.
	Wrote      bool
	ReleaseRef string
}

// Event is one event on the HelmRelease.
type Event struct {
	Type, Reason, Message string
	// Always is true for events about writes made in this pass, which are
	// emitted even if the condition text did not change.
	Always bool
}

// Summarize turns a Result into an Outcome.
func Summarize(res *apply.Result) Outcome {
	if v := res.Verdict; v != nil {
		return fromVerdict(*v)
	}
	lines, drifted, failed := describe(res)
	notes := describeNotes(res)
	ref := res.Release.Ref()
	out := Outcome{Drifted: drifted, Wrote: res.Writes > 0, ReleaseRef: ref}
	switch {
	case res.Err != nil:
		out.Drifted = stillDrifted(res)
		out.set(metav1.ConditionFalse, api.CorrectionFailedReason, fmt.Sprintf("Correction of release %s failed: %s", ref, res.Err)+notes)
		out.event("Warning", api.TemplateDriftCorrectionFailedEvent, false)
	case failed && res.Options.Mode == plan.ModeEnabled:
		out.set(metav1.ConditionFalse, api.CorrectionFailedReason, fmt.Sprintf("Correction of release %s failed: %s", ref, strings.Join(lines, "; "))+notes)
		out.event("Warning", api.TemplateDriftCorrectionFailedEvent, false)
	case drifted > 0:
		out.set(metav1.ConditionFalse, api.DriftDetectedReason, fmt.Sprintf("Drift in release %s: %s", ref, strings.Join(lines, "; "))+notes)
		out.event("Warning", api.TemplateDriftDetectedEvent, false)
	case len(lines) > 0:
		out.set(metav1.ConditionTrue, api.DriftCorrectedReason, fmt.Sprintf("Corrected release %s: %s", ref, strings.Join(lines, "; "))+notes)
		out.event("Normal", api.TemplateDriftCorrectedEvent, res.Writes > 0)
	default:
		out.set(metav1.ConditionTrue, api.NoDriftDetectedReason, fmt.Sprintf("%d templates of release %s match the manifest", checked(res), ref)+notes)
	}
	for _, t := range res.Templates {
		if t.Reverted && res.Writes > 0 {
			out.Events = append(out.Events, Event{Type: "Warning", Reason: api.TemplateReferenceRevertedEvent, Always: true,
				Message: truncate(fmt.Sprintf("A reference to %s was set back (by Helm or a person) and repointed to %s again", t.ID, t.RenameTo), maxEventRunes)})
		}
	}
	return out
}

// set records the condition, its message cut to maxMessageRunes.
func (o *Outcome) set(status metav1.ConditionStatus, reason, msg string) {
	o.Condition = &metav1.Condition{Type: api.TemplatesInSyncCondition, Status: status, Reason: reason, Message: truncate(msg, maxMessageRunes)}
}

// event records an event carrying the condition's message, cut to the
// limit of the events.k8s.io API.
func (o *Outcome) event(typ, reason string, always bool) {
	o.Events = append(o.Events, Event{Type: typ, Reason: reason, Message: truncate(o.Condition.Message, maxEventRunes), Always: always})
}

func truncate(msg string, max int) string {
	if r := []rune(msg); len(r) > max {
		return string(r[:max]) + "…"
	}
	return msg
}

// checked counts the templates that were compared (not skipped).
func checked(res *apply.Result) int {
	n := 0
	for _, t := range res.Templates {
		if t.State != plan.StateSkipped {
			n++
		}
	}
	return n
}

// stillDrifted counts the templates a failed pass may have left drifted.
func stillDrifted(res *apply.Result) int {
	n := 0
	for _, t := range res.Templates {
		if (t.State == plan.StateDrifted || t.State == plan.StateMissing || t.State == plan.StateDeleting) && !t.Superseded {
			n++
		}
	}
	return n
}

func fromVerdict(v plan.Verdict) Outcome {
	switch {
	case v.Remove:
		return Outcome{Remove: true}
	case v.Silent:
		return Outcome{Drifted: unknownDrift}
	}
	out := Outcome{Drifted: unknownDrift}
	out.set(metav1.ConditionStatus(v.Status), v.Reason, v.Message)
	typ := "Warning"
	if v.Reason == api.ClusterPausedReason {
		typ = "Normal"
	}
	out.event(typ, v.Reason, false)
	return out
}

// describe renders one line per template that is not simply in sync, and
// counts those still drifted (not corrected, or waiting) and failed.
func describe(res *apply.Result) (lines []string, drifted int, failed bool) {
	enabled := res.Options.Mode == plan.ModeEnabled
	for _, t := range res.Templates {
		line := t.ID.Kind + "/" + t.ID.Name
		switch {
		case t.State == plan.StateSkipped || t.State == plan.StateInSync:
			continue
		case t.Failed != "":
			failed = true
			drifted++
			line += ": " + t.Failed
		case t.State == plan.StateDeleting:
			drifted++
			line += ": waiting for deletion to finish"
		case t.State == plan.StateMissing:
			line += fmt.Sprintf(": missing, %s from the manifest, rolls machines: no", verb(enabled, "recreated", "would recreate"))
			if !enabled {
				drifted++
			}
		case t.Superseded:
			continue
		default:
			line += ": " + strategyText(t, enabled) + " [" + diff.Summary(t.Changes, maxValueRunes, maxPathsPerItem) + "]"
			if !enabled {
				drifted++
			}
		}
		lines = append(lines, line)
	}
	return lines, drifted, failed
}

// describeNotes names the templates healed by an earlier rotation, and those
// left alone and why (not owned by the release, opted out, owned by a
// ClusterClass), so a user sees what the add-on did not check.
func describeNotes(res *apply.Result) string {
	var superseded, skipped []string
	for _, t := range res.Templates {
		switch {
		case t.State == plan.StateSkipped:
			skipped = append(skipped, t.ID.Kind+"/"+t.ID.Name+" ("+t.Skip+")")
		case t.Superseded:
			superseded = append(superseded, t.ID.Kind+"/"+t.ID.Name+" by "+t.RenameTo)
		}
	}
	var b strings.Builder
	if len(superseded) > 0 {
		b.WriteString(". Superseded earlier: " + strings.Join(superseded, ", "))
	}
	if len(skipped) > 0 {
		b.WriteString(". Skipped: " + strings.Join(skipped, ", "))
	}
	return b.String()
}

func strategyText(t apply.TemplateResult, enabled bool) string {
	s := string(t.Strategy)
	if t.RenameTo != "" {
		s += " to " + t.RenameTo
	}
	if !enabled {
		s = "would " + s
	}
	return fmt.Sprintf("%s, rolls machines: %s", s, yesNo(t.Rolls))
}

func verb(enabled bool, done, would string) string {
	if enabled {
		return done
	}
	return would
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
