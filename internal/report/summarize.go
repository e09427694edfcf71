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
)

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
	skipped := describeSkipped(res)
	out := Outcome{Drifted: drifted, Wrote: res.Writes > 0, ReleaseRef: res.Release.Ref()}
	corrected := res.Writes > 0
	switch {
	case res.Err != nil:
		msg := fmt.Sprintf("Correction of release %s failed: %s", res.Release.Ref(), res.Err)
		out.set(metav1.ConditionFalse, api.CorrectionFailedReason, msg)
		out.Events = append(out.Events, Event{Type: "Warning", Reason: api.TemplateDriftCorrectionFailedEvent, Message: msg})
	case failed && res.Options.Mode == plan.ModeEnabled:
		msg := fmt.Sprintf("Correction of release %s failed: %s", res.Release.Ref(), strings.Join(lines, "; "))
		out.set(metav1.ConditionFalse, api.CorrectionFailedReason, msg)
		out.Events = append(out.Events, Event{Type: "Warning", Reason: api.TemplateDriftCorrectionFailedEvent, Message: msg})
	case drifted > 0:
		msg := fmt.Sprintf("Drift in release %s: %s", res.Release.Ref(), strings.Join(lines, "; "))
		out.set(metav1.ConditionFalse, api.DriftDetectedReason, msg)
		out.Events = append(out.Events, Event{Type: "Warning", Reason: api.TemplateDriftDetectedEvent, Message: msg})
	case len(lines) > 0:
		msg := fmt.Sprintf("Corrected release %s: %s", res.Release.Ref(), strings.Join(lines, "; "))
		out.set(metav1.ConditionTrue, api.DriftCorrectedReason, msg)
		out.Events = append(out.Events, Event{Type: "Normal", Reason: api.TemplateDriftCorrectedEvent, Message: msg, Always: corrected})
	default:
		msg := fmt.Sprintf("%d templates of release %s match the manifest", len(res.Templates), res.Release.Ref())
		out.set(metav1.ConditionTrue, api.NoDriftDetectedReason, msg)
	}
	if out.Condition != nil && skipped != "" {
		out.Condition.Message += skipped
		for i := range out.Events {
			out.Events[i].Message += skipped
		}
	}
	for _, t := range res.Templates {
		if t.Reverted && corrected {
			out.Events = append(out.Events, Event{Type: "Warning", Reason: api.TemplateReferenceRevertedEvent, Always: true,
				Message: fmt.Sprintf("A reference to %s was set back (by Helm or a person) and repointed to %s again", t.ID, t.RenameTo)})
		}
	}
	return out
}

func (o *Outcome) set(status metav1.ConditionStatus, reason, msg string) {
	if r := []rune(msg); len(r) > maxMessageRunes {
		msg = string(r[:maxMessageRunes]) + "…"
	}
	o.Condition = &metav1.Condition{Type: api.TemplatesInSyncCondition, Status: status, Reason: reason, Message: msg}
}

func fromVerdict(v plan.Verdict) Outcome {
	switch {
	case v.Remove:
		return Outcome{Remove: true}
	case v.Silent:
		return Outcome{}
	}
	out := Outcome{}
	out.set(metav1.ConditionStatus(v.Status), v.Reason, v.Message)
	typ := "Warning"
	if v.Reason == api.ClusterPausedReason {
		typ = "Normal"
	}
	out.Events = []Event{{Type: typ, Reason: v.Reason, Message: v.Message}}
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
		case t.Superseded && !enabled:
			line += fmt.Sprintf(": superseded by %s, rotated earlier", t.RenameTo)
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

// describeSkipped names the templates left alone and why (not owned by the
// release, opted out, owned by a ClusterClass), so a user sees what the
// add-on did not check.
func describeSkipped(res *apply.Result) string {
	var parts []string
	for _, t := range res.Templates {
		if t.State == plan.StateSkipped {
			parts = append(parts, t.ID.Kind+"/"+t.ID.Name+" ("+t.Skip+")")
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return ". Skipped: " + strings.Join(parts, ", ")
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
