package plan

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/diff"
	"github.com/templatedrift/template-drift-controller/internal/manifest"
)

// TemplateInput is what the gatherer read about one template.
type TemplateInput struct {
	// Desired is the effective desired object: the manifest's, with
	// references to rotated templates rewritten (see EffectiveDesired).
	Desired *unstructured.Unstructured
	// Live is the live object, nil when missing.
	Live *unstructured.Unstructured
	// Changes are the drifted fields of Live against Desired, confirmed
	// with the server's view of the corrected object (diff.Confirm): the
	// differences the server makes itself are not in them.
	Changes []diff.Change
	// Unconfirmed is the server's refusal of the dry-run that confirms
	// Changes; they are then the raw diff. "" when confirmed or not asked.
	Unconfirmed string
	// Skip is why the template must not be touched, or "". Conflict is
	// set instead when another Helm release owns the live template
	// (Ownership).
	Skip, Conflict string
	// ReplacementName is RotatedName of Desired.
	ReplacementName string
	// Replacement is the live object called ReplacementName, or nil, and
	// ReplacementChanges its drift against Desired, confirmed with the same
	// server view as Changes.
	Replacement        *unstructured.Unstructured
	ReplacementChanges []diff.Change
	// DryRun is the server's answer to the in-place correction, with its
	// message; DryRunNotRun when the strategy did not need one.
	DryRun        DryRun
	DryRunMessage string
	// Requested is the strategy annotation; Helm the release facts.
	Requested Strategy
	Helm      HelmFacts
	// Release is the reference ("<ns>/<name>.v<N>") of the release the
	// pass works from, to recognise corrections recorded for it.
	Release string
	// Users are the live objects that reference the template, whoever owns
	// them (IndexUsers); a recreate may delete it only when DeleteBlocked
	// says the delete completes at once.
	Users []User
	// Foreign are the consumers outside the release among Users
	// (Users.Foreign): a rotation never repoints them.
	Holders []manifest.ID
}

// DecideTemplate decides what to do about one template. A difference that
// a correction of this release already wrote once, and that came back,
// fails instead of being written again (see repeatedCorrection).
func DecideTemplate(in TemplateInput) TemplatePlan {
	p := TemplatePlan{ID: manifest.IDOf(in.Desired), Changes: in.Changes, Desired: in.Desired, Live: in.Live, Unconfirmed: in.Unconfirmed}
	switch {
	case in.Skip != "":
		p.Outcome, p.Message = OutcomeSkipped, in.Skip
		return p
	case in.Conflict != "":
		p.Outcome, p.Message = OutcomeConflict, in.Conflict
		return p
	case in.Live == nil:
		p.Outcome, p.Strategy, p.Writes = OutcomeMissing, StrategyRecreate, []Write{WriteCreate}
		return p
	case in.Live.GetDeletionTimestamp() != nil:
		p.Outcome = OutcomeWaiting
		return p
	case len(in.Changes) == 0:
		p.Outcome = OutcomeInSync
		if s, ok := recordedCorrection(in.Live, in.Release); ok {
			p.Outcome, p.Strategy = OutcomeCorrected, s
		}
		return p
	}
	if msg, repeated := repeatedCorrection(in.Live, in.Release, in.Changes); repeated {
		p.Outcome, p.Message = OutcomeFailed, msg
		return p
	}
	strategy, ok := Choose(in.Requested, in.DryRun, in.Helm)
	if !ok {
		p.Outcome, p.Message = OutcomeFailed, fmt.Sprintf("in-place correction refused: %s", in.DryRunMessage)
		return p
	}
	p.Outcome, p.Strategy = OutcomeDrifted, strategy
	switch strategy {
	case StrategyInPlace:
		p.Writes, p.DriftDigest = []Write{WritePatch}, DriftDigest(in.Changes)
		return p
	case StrategyRecreate:
		if why, blocked := DeleteBlocked(in.Live, in.Users); blocked {
			p.Outcome, p.Message = OutcomeBlocked, blockedMessage(in, why)
			return p
		}
		p.Writes, p.DriftDigest = []Write{WriteDelete, WriteCreate}, DriftDigest(in.Changes)
		return p
	}
	return decideRotation(p, in)
}

// ReadsReplacement reports whether DecideTemplate reads in.Replacement: only
// when the template rotates. A pass looks for the replacement only then:
// where the read cache is narrowed to a label selector, a replacement the
// cache does not hold is asked of the API server, one request for every
// drifted template corrected in place otherwise.
func ReadsReplacement(in TemplateInput) bool {
	strategy, ok := Choose(in.Requested, in.DryRun, in.Helm)
	return ok && strategy == StrategyRotate
}

// decideRotation completes the plan of a template that rotates: a
// replacement that exists and differs is a failure (a name collision, or
// someone edited it); otherwise the writes still missing, or, when the
// replacement exists and the original is marked, a rotation that is done.
func decideRotation(p TemplatePlan, in TemplateInput) TemplatePlan {
	if in.Replacement != nil && len(in.ReplacementChanges) > 0 {
		p.Outcome = OutcomeFailed
		p.Message = fmt.Sprintf("replacement %s exists and differs from the manifest: %s",
			in.ReplacementName, diff.Summary(in.ReplacementChanges, 60, 3))
		return p
	}
	p.Rotation = &Rotation{To: in.ReplacementName, HeldBy: in.Holders}
	if in.Replacement == nil {
		p.Writes = append(p.Writes, WriteCreateReplacement)
	}
	// A consumer outside the release keeps the drifted original in use: it
	// is never repointed, and the original is not called superseded.
	if len(p.HeldBy()) == 0 && in.Live.GetAnnotations()[api.SupersededByAnnotation] != in.ReplacementName {
		p.Writes = append(p.Writes, WriteMarkSuperseded)
	}
	if len(p.Writes) > 0 {
		return p
	}
	if len(p.HeldBy()) > 0 {
		p.Outcome = OutcomeHeld
		return p
	}
	// Done on an earlier pass: the original's drift is history, not work.
	p.Outcome = OutcomeSuperseded
	if in.Replacement.GetAnnotations()[api.SourceReleaseAnnotation] == in.Release {
		p.Outcome = OutcomeCorrected
	}
	return p
}

// recordedCorrection reads the record a correction leaves on the object it
// wrote: the release it corrected the template for, and how.
func recordedCorrection(live *unstructured.Unstructured, release string) (Strategy, bool) {
	ann := live.GetAnnotations()
	s := Strategy(ann[api.CorrectionAnnotation])
	if release == "" || ann[api.SourceReleaseAnnotation] != release || (s != StrategyInPlace && s != StrategyRecreate) {
		return "", false
	}
	return s, true
}

// EffectiveDesired returns desired with every reference to a template that
// is being rotated rewritten to its replacement: a Metal3MachineTemplate
// whose Metal3DataTemplate rotates must name the replacement, and that is
// drift of the machine template itself, corrected by its own strategy.
func EffectiveDesired(desired *unstructured.Unstructured, renames map[manifest.ID]string) (*unstructured.Unstructured, error) {
	var all []diff.Change
	for from, to := range renames {
		changes, err := manifest.Repoint(desired, from, to)
		if err != nil {
			return nil, err
		}
		all = append(all, changes...)
	}
	if len(all) == 0 {
		return desired, nil
	}
	return diff.Apply(desired, all)
}
