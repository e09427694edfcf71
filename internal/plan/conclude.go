package plan

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/templatedrift/template-drift-controller/api"
)

// UnknownDrift is Conclusion.Drifted for a pass that did not compare
// templates: the drifted-templates gauge keeps its last value.
const UnknownDrift = -1

// Conclusion is what one pass amounts to for its HelmRelease: the
// condition's status and reason, the gauge, the corrections to count.
// The reporter formats it and decides nothing.
type Conclusion struct {
	// Status and Reason of the TemplatesInSync condition.
	Status metav1.ConditionStatus
	Reason string
	// Remove asks to remove the condition (the release opted out); Silent
	// asks to write nothing at all (the HelmRelease is suspended).
	Remove, Silent bool
	// Warning is true when the condition's event is a Warning: every state
	// but one in sync and the waits that are a normal state of a cluster
	// (see warns).
	Warning bool
	// Drifted counts the templates that still differ from the manifest
	// after the pass, or UnknownDrift.
	Drifted int
	// Corrections are the corrections the pass made (or tried, when
	// CorrectionsFailed), one per template, for the counter.
	Corrections       []Correction
	CorrectionsFailed bool
	// Checked counts the templates compared with the live world (skipped
	// ones are not).
	Checked int
	// AwaitingApproval counts the corrections that would roll Machines and
	// wait for an approval (in a pass that may write).
	AwaitingApproval int
}

// Correction is one template correction a pass made or tried, as the
// corrections counter labels it: by the template's kind and the strategy.
type Correction struct {
	Kind     string
	Strategy Strategy
}

// Conclude sums up a pass: its decisions, the error that stopped its
// writes (nil when it made them all or made none) and how many it made.
func Conclude(d Decisions, actErr error, writes int) Conclusion {
	if v := d.Verdict; v != nil {
		return Conclusion{Status: v.Status, Reason: v.Reason, Remove: v.Remove, Silent: v.Silent, Drifted: UnknownDrift, Warning: warns(v.Reason)}
	}
	c, f := tally(d)
	switch {
	case actErr != nil:
		c.Status, c.Reason, c.CorrectionsFailed = metav1.ConditionFalse, api.CorrectionFailedReason, true
		c.Drifted = differing(d.Templates)
	case f.failed && d.Act:
		c.Status, c.Reason = metav1.ConditionFalse, api.CorrectionFailedReason
	case f.blocked && d.Act:
		c.Status, c.Reason = metav1.ConditionFalse, api.CorrectionBlockedReason
	case f.conflict:
		c.Status, c.Reason = metav1.ConditionFalse, api.OwnershipConflictReason
	case f.awaiting == RolloutAwaitingApproval && d.Act:
		c.Status, c.Reason = metav1.ConditionFalse, api.RolloutAwaitingApprovalReason
	case f.awaiting == RolloutAwaitingBudget && d.Act:
		c.Status, c.Reason = metav1.ConditionFalse, api.RolloutBudgetExhaustedReason
	case c.Drifted > 0 || (!d.Act && d.ConsumersDiffer()):
		c.Status, c.Reason = metav1.ConditionFalse, api.DriftDetectedReason
	case f.corrected:
		c.Status, c.Reason = metav1.ConditionTrue, api.DriftCorrectedReason
	default:
		c.Status, c.Reason = metav1.ConditionTrue, api.NoDriftDetectedReason
	}
	if actErr == nil && writes == 0 {
		c.Corrections = nil
	}
	c.Warning = warns(c.Reason)
	return c
}

// findings are what the templates' outcomes say, for the condition's reason.
type findings struct {
	failed, blocked, corrected, conflict bool
	// awaiting is RolloutAwaitingApproval when a correction waits for an
	// approval, else RolloutAwaitingBudget when one waits for the budget.
	awaiting RolloutState
}

// tally counts what a pass's templates amount to: the templates checked
// and still differing, the corrections to count, and its findings.
func tally(d Decisions) (Conclusion, findings) {
	c := Conclusion{}
	f := findings{conflict: len(d.Conflicts) > 0}
	for _, t := range d.Templates {
		if t.Outcome != OutcomeSkipped && t.Outcome != OutcomeConflict {
			c.Checked++
		}
		switch t.Outcome {
		case OutcomeFailed:
			f.failed = true
			c.Drifted++
		case OutcomeBlocked:
			f.blocked = true
			c.Drifted++
		case OutcomeWaiting, OutcomeHeld:
			c.Drifted++
		case OutcomeAwaitingRollout:
			c.Drifted++
			if f.awaiting != RolloutAwaitingApproval {
				f.awaiting = t.Rollout.State
			}
			if d.Act && t.Rollout.State == RolloutAwaitingApproval {
				c.AwaitingApproval++
			}
		case OutcomeDrifted, OutcomeMissing:
			f.corrected = f.corrected || d.Act
			if d.Corrects(t) {
				c.Corrections = append(c.Corrections, Correction{Kind: t.ID.Kind, Strategy: t.Strategy})
			}
			// A rotation that consumers outside the release still hold
			// leaves the drifted original in use: not in sync.
			if !d.Act || len(t.HeldBy()) > 0 {
				c.Drifted++
			}
		case OutcomeCorrected:
			f.corrected = true
		case OutcomeConflict:
			f.conflict = true
		}
		if len(t.HeldBy()) > 0 && !t.Outcome.Differs() && t.Outcome != OutcomeDrifted && t.Outcome != OutcomeMissing {
			// Consumers outside the release keep the drifted original in
			// use, whatever else is said of it.
			c.Drifted++
		}
		switch {
		case t.Restored && d.Act:
			f.corrected = true
		case t.Restored, t.ConsumersBehind() && !d.Act:
			// Consumers do not point where they must: drift of their
			// references. A pass that may write repoints consumers behind
			// a rotation done earlier and tells it with its own event.
			c.Drifted++
		}
	}
	return c, f
}

// warns reports whether the condition's event for reason is a Warning. It
// is Normal for a release in sync, and for the waits that are a normal
// state of a cluster: paused (a cluster being moved, or an object paused
// on purpose), Helm in flight (an upgrade, install or rollback
// running) and a rollout waiting for the fleet's budget, as it was set to. A Cluster that is missing or being deleted is a Warning: the
// HelmRelease still renders a Cluster that is gone, which someone should
// look at.
func warns(reason string) bool {
	switch reason {
	case "", api.DriftCorrectedReason, api.NoDriftDetectedReason, api.ClusterPausedReason, api.ReleaseInProgressReason,
		api.RolloutBudgetExhaustedReason:
		return false
	}
	return true
}

// Corrects reports whether the pass makes a correction of t, the one
// definition the corrections counter and the event that lists the
// corrections share: a pass that may write, a template drifted or
// missing. A pass whose only write is the superseded-by mark
// of a rotation completes a correction made, and counted, when its
// replacement was created.
func (d Decisions) Corrects(t TemplatePlan) bool {
	markOnly := len(t.Writes) == 1 && t.Writes[0] == WriteMarkSuperseded
	return d.Act && (t.Outcome == OutcomeDrifted || t.Outcome == OutcomeMissing) && !markOnly
}

// differing counts the templates a pass whose writes failed may have left
// differing from the manifest.
func differing(templates []TemplatePlan) int {
	n := 0
	for _, t := range templates {
		if t.Outcome.Differs() {
			n++
		}
	}
	return n
}

// ConsumersDiffer reports whether a consumer of the release references
// something other than where it must point.
func (d Decisions) ConsumersDiffer() bool {
	for _, cp := range d.Consumers {
		if len(cp.Changes) > 0 {
			return true
		}
	}
	return false
}

// Next is when a pass's HelmRelease is looked at again.
type Next string

const (
	// NextBackoff retries with the rate limiter's back-off: the writes
	// failed.
	NextBackoff Next = "Backoff"
	// NextNever waits for a change of the HelmRelease: the condition was
	// removed (opted out) or the HelmRelease is suspended.
	NextNever Next = "Never"
	// NextWait looks again after the wait interval: something is pending
	// (drift left, a wait, a correction blocked).
	NextWait Next = "Wait"
	// NextResync looks again at the periodic resync: in sync.
	NextResync Next = "Resync"
)

// NextPass decides when to look again after a pass: c is its conclusion,
// actErr what acting made of its writes.
func NextPass(c Conclusion, actErr error) Next {
	switch {
	case actErr != nil:
		return NextBackoff
	case c.Remove || c.Silent:
		return NextNever
	case c.Status != metav1.ConditionTrue:
		return NextWait
	}
	return NextResync
}
