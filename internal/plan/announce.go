package plan

import "github.com/templatedrift/template-drift-controller/api"

// Announcements are the events a pass fires besides its condition's event.
type Announcements struct {
	// Corrections is true when the pass wrote corrections but still ends
	// not in sync (another template blocked, a rotation held, drift left,
	// an ownership conflict, a rollout waiting): the condition's event is about what is left,
	// so the corrections made are told by an event of their own.
	Corrections bool
	// Pruned is true when the clean-up deleted replacements.
	Pruned bool
	// Reverted are the templates whose consumers had been set back (by Helm
	// or a person) and were repointed again by this pass.
	Reverted []TemplatePlan
}

// Announce decides which events a pass fires besides its condition's: c is
// the pass's Conclusion, writes and actErr what acting made of d, pruned
// how many replacements the clean-up deleted.
func Announce(d Decisions, c Conclusion, writes int, actErr error, pruned int) Announcements {
	var a Announcements
	if d.Verdict != nil {
		return a
	}
	wrote := writes > 0 && actErr == nil
	switch c.Reason {
	case api.CorrectionBlockedReason, api.DriftDetectedReason, api.OwnershipConflictReason,
		api.RolloutAwaitingApprovalReason, api.RolloutBudgetExhaustedReason:
		a.Corrections = wrote
	}
	a.Pruned = pruned > 0
	if wrote {
		for _, t := range d.Templates {
			if t.Reverted() {
				a.Reverted = append(a.Reverted, t)
			}
		}
	}
	return a
}

// StopsWrites reports whether the writes of a pass stop at this template:
// one that failed does, and so no write after it is made, since a later
// write might reference an object it should have made.
func (t TemplatePlan) StopsWrites() bool {
	return t.Outcome == OutcomeFailed
}
