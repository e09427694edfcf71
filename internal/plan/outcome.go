package plan

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/templatedrift/template-drift-controller/internal/diff"
	"github.com/templatedrift/template-drift-controller/internal/manifest"
)

// Outcome is what a pass makes of one template. It is the one value the
// condition, events, metrics and the diff output read: none of them works
// out "still drifted" for itself.
type Outcome string

const (
	// OutcomeInSync means the live template matches the manifest.
	OutcomeInSync Outcome = "InSync"
	// OutcomeCorrected means the live template matches the manifest because the
	// add-on corrected it (in place or by recreate) for the release this
	// pass works from, as the template's own annotations record.
	OutcomeCorrected Outcome = "Corrected"
	// OutcomeSuperseded means a rotation replaced the template; its consumers
	// reference the replacement, which matches the manifest.
	OutcomeSuperseded Outcome = "Superseded"
	// OutcomeSkipped means the template is not the add-on's to touch; Message
	// says why.
	OutcomeSkipped Outcome = "Skipped"
	// OutcomeConflict means the live template belongs to another Helm
	// release (its meta.helm.sh annotations name it; Message names it): the
	// manifest claims an object that is not the release's, nothing is
	// written to it, and the release is not reported in sync.
	OutcomeConflict Outcome = "Conflict"
	// OutcomeDrifted means the live template differs from the manifest, and
	// Strategy corrects it with Writes.
	OutcomeDrifted Outcome = "Drifted"
	// OutcomeMissing means the template is in the manifest but not live (a
	// recreate stopped between delete and create, or someone deleted it);
	// it is created from the manifest.
	OutcomeMissing Outcome = "Missing"
	// OutcomeWaiting means the live template is being deleted; the pass waits.
	OutcomeWaiting Outcome = "Waiting"
	// OutcomeBlocked means the template differs and no correction of it can
	// stick: a recreate cannot complete (something uses it, or a finalizer
	// holds it) and Helm would set a rotation back. Nothing is written for
	// it; Message names what holds it and the ways out.
	OutcomeBlocked Outcome = "Blocked"
	// OutcomeHeld means a rotation is in effect for the release's consumers,
	// but consumers outside the release (Rotation.HeldBy) still use the drifted
	// original, which is therefore not marked superseded.
	OutcomeHeld Outcome = "Held"
	// OutcomeFailed means the template differs and no strategy can correct it,
	// or a correction of this release was written once and the same
	// difference came back; Message carries the reason, with the server's
	// words.
	OutcomeFailed Outcome = "Failed"
	// OutcomeAwaitingRollout means the correction would roll Machines and
	// may not yet (Rollout.State says why: no approval, or no budget):
	// nothing is written for it, its consumers stay where they are.
	OutcomeAwaitingRollout Outcome = "AwaitingRollout"
)

// Differs reports whether the live world still differs from the manifest
// for this outcome, before any write of the pass.
func (o Outcome) Differs() bool {
	switch o {
	case OutcomeDrifted, OutcomeMissing, OutcomeWaiting, OutcomeFailed, OutcomeBlocked, OutcomeHeld, OutcomeAwaitingRollout:
		return true
	}
	return false
}

// Write is one write a template's correction needs, in the order Act makes
// them.
type Write string

const (
	// WritePatch patches the drifted fields of the live template in place,
	// and records the correction on it.
	WritePatch Write = "Patch"
	// WriteCreateReplacement creates the rotated replacement.
	WriteCreateReplacement Write = "CreateReplacement"
	// WriteDelete deletes the live template (recreate), with UID and
	// resourceVersion preconditions.
	WriteDelete Write = "Delete"
	// WriteCreate creates the template under its own name from the manifest
	// (recreate, or a missing template).
	WriteCreate Write = "Create"
	// WriteMarkSuperseded marks the original with the replacement's name,
	// after every consumer references the replacement.
	WriteMarkSuperseded Write = "MarkSuperseded"
	// WriteUnmark removes the superseded-by mark from an original that
	// matches the manifest again, after its consumers moved back to it.
	WriteUnmark Write = "Unmark"
)

// TemplatePlan is the decision for one template, with the objects acting
// on it needs.
type TemplatePlan struct {
	ID      manifest.ID
	Outcome Outcome
	// Message says why a template is skipped or failed; "" otherwise.
	Message string
	// Changes are the drifted fields of Live against Desired, confirmed
	// with the server (see TemplateInput.Changes).
	Changes []diff.Change
	// Unconfirmed is the server's refusal of the dry-run that would have
	// confirmed Changes, which are then the raw diff; "" otherwise.
	Unconfirmed string
	// DriftDigest is DriftDigest of Changes, set for an in-place or
	// recreate correction, which records it on the template
	// (api.CorrectedDriftAnnotation) so the next pass recognises the same
	// difference coming back.
	DriftDigest string
	// Strategy is the correction: for Drifted and Missing, and for Corrected
	// and Superseded the one that was used.
	Strategy Strategy
	// Writes are the writes the correction still needs, in order. Whether
	// the pass makes them is Decisions.Act (mode enabled, not read-only).
	Writes []Write
	// Rotation is set while a rotation is in effect: consumers of the
	// release must reference its replacement. Nil otherwise.
	Rotation *Rotation
	// RollsMachines is true when the correction rolls machines: a
	// MachineDeployment or control plane references the rotated template.
	RollsMachines bool
	// Restored is true when consumers of the release move back to this
	// template from one of its replacements this pass (the way back).
	Restored bool
	// Rollout is set when the correction moves consumers that roll
	// Machines this pass, or would and waits (OutcomeAwaitingRollout).
	Rollout *MachineRollout
	// Desired is the effective desired object; Live the live one (nil when
	// missing).
	Desired, Live *unstructured.Unstructured
}

// Rotation is a rotation in effect for one template.
type Rotation struct {
	// To is the replacement's name: consumers of the release reference it.
	To string
	// HeldBy names the consumers outside the release that still use the
	// drifted original; the add-on never repoints them.
	HeldBy []manifest.ID
	// Reverted is true when a consumer had been set back to the original
	// after an earlier repoint.
	Reverted bool
	// ConsumersBehind is true when the rotation is done (the template is
	// Superseded or Corrected) but consumers of the release still
	// reference something else than the replacement: set back, or left on
	// an earlier replacement. They are repointed this pass.
	ConsumersBehind bool
}

// RenameTo is the replacement consumers must reference while a rotation
// is in effect, or "".
func (p TemplatePlan) RenameTo() string {
	if p.Rotation == nil {
		return ""
	}
	return p.Rotation.To
}

// HeldBy names the consumers outside the release that keep the drifted
// original of a rotation in use.
func (p TemplatePlan) HeldBy() []manifest.ID {
	if p.Rotation == nil {
		return nil
	}
	return p.Rotation.HeldBy
}

// Reverted reports whether a consumer had set the rotation back.
func (p TemplatePlan) Reverted() bool { return p.Rotation != nil && p.Rotation.Reverted }

// ConsumersBehind reports whether consumers are behind a rotation that is
// done.
func (p TemplatePlan) ConsumersBehind() bool { return p.Rotation != nil && p.Rotation.ConsumersBehind }

// Needs reports whether w is one of the writes the plan still needs.
func (p TemplatePlan) Needs(w Write) bool {
	for _, x := range p.Writes {
		if x == w {
			return true
		}
	}
	return false
}

// Decisions is everything plan decided for one pass.
type Decisions struct {
	// Options as parsed from the HelmRelease.
	Options Options
	// Act is true when the pass may write: mode enabled, not read-only.
	Act bool
	// Verdict is set when a gate stopped the pass; nothing else is then.
	Verdict *Verdict
	// Templates in dependency order, and the consumers of the release.
	Templates []TemplatePlan
	Consumers []ConsumerPlan
	// Prune are the replacements the add-on created for this release that
	// nothing uses any more, to delete (see DecidePrune); empty when clean-up
	// is disabled.
	Prune []*unstructured.Unstructured
	// Conflicts are the consumers of the manifest whose live objects belong
	// to another Helm release (OwnedByAnother): they are not decided and
	// never written, and count as users outside the release.
	Conflicts []Conflict
	// Approvals say what became of each approved rollout id.
	Approvals []Approval
}

// Conflict is an object of the manifest that another Helm release owns.
type Conflict struct {
	ID manifest.ID
	// Owner names the release that owns it ("<ns>/<name>").
	Owner string
}
