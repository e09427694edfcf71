package plan

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/diff"
	"github.com/templatedrift/template-drift-controller/internal/pair"
)

// State is where one template stands in this pass.
type State string

const (
	// StateInSync: the live template matches the manifest.
	StateInSync State = "InSync"
	// StateDrifted: the live template differs from the manifest.
	StateDrifted State = "Drifted"
	// StateMissing: the template is in the manifest but not live, e.g. a
	// recreate stopped between its delete and its create.
	StateMissing State = "Missing"
	// StateDeleting: the live template is being deleted (finalizers); wait.
	StateDeleting State = "Deleting"
	// StateSkipped: the template is not ours to touch; see Skip.
	StateSkipped State = "Skipped"
)

// TemplateInput is what the gatherer read about one template.
type TemplateInput struct {
	// Desired is the effective desired object: the manifest's, with
	// references to rotated templates rewritten (see EffectiveDesired).
	Desired *unstructured.Unstructured
	// Live is the live object, nil when missing.
	Live *unstructured.Unstructured
	// Changes are the drifted fields of Live against Desired.
	Changes []diff.Change
	// Skip is why the template must not be touched, or "".
	Skip string
	// ReplacementName is RotatedName of Desired.
	ReplacementName string
	// Replacement is the live object called ReplacementName, or nil, and
	// ReplacementChanges its drift against Desired.
	Replacement        *unstructured.Unstructured
	ReplacementChanges []diff.Change
	// DryRun is the server's answer to the in-place correction, with its
	// message; DryRunNotRun when the strategy did not need one.
	DryRun        DryRun
	DryRunMessage string
	// Requested is the strategy annotation; Helm the release facts.
	Requested Strategy
	Helm      HelmFacts
}

// TemplatePlan is the decision for one template.
type TemplatePlan struct {
	ID      pair.ID
	State   State
	Skip    string
	Changes []diff.Change
	// Strategy corrects a drifted or missing template; "" when in sync.
	Strategy Strategy
	// Failed is the reason no strategy can be used, with the server's message.
	Failed string
	// RenameTo is set while a rotation is in effect: consumers must
	// reference the replacement of this name.
	RenameTo string
	// CreateReplacement, MarkSuperseded: the writes a rotation still needs.
	CreateReplacement bool
	MarkSuperseded    bool
	// Superseded is true when an earlier pass completed the rotation: the
	// replacement matches the manifest and the original is marked. The
	// original's drift is then history, not work.
	Superseded bool
}

// DecideTemplate decides what to do about one template.
func DecideTemplate(in TemplateInput) TemplatePlan {
	p := TemplatePlan{ID: pair.IDOf(in.Desired), Changes: in.Changes}
	switch {
	case in.Skip != "":
		p.State, p.Skip = StateSkipped, in.Skip
		return p
	case in.Live == nil:
		p.State, p.Strategy = StateMissing, StrategyRecreate
		return p
	case in.Live.GetDeletionTimestamp() != nil:
		p.State = StateDeleting
		return p
	case len(in.Changes) == 0:
		p.State = StateInSync
		return p
	}
	p.State = StateDrifted
	strategy, ok := Choose(in.Requested, in.DryRun, in.Helm)
	if !ok {
		p.Failed = fmt.Sprintf("in-place correction refused: %s", in.DryRunMessage)
		return p
	}
	p.Strategy = strategy
	if strategy != StrategyRotate {
		return p
	}
	if in.Replacement != nil && len(in.ReplacementChanges) > 0 {
		p.Failed = fmt.Sprintf("replacement %s exists and differs from the manifest: %s",
			in.ReplacementName, diff.Summary(in.ReplacementChanges, 60, 3))
		return p
	}
	p.RenameTo = in.ReplacementName
	p.CreateReplacement = in.Replacement == nil
	p.MarkSuperseded = in.Live.GetAnnotations()[api.SupersededByAnnotation] != in.ReplacementName
	p.Superseded = !p.CreateReplacement && !p.MarkSuperseded
	return p
}

// EffectiveDesired returns desired with every reference to a template that
// is being rotated rewritten to its replacement: a Metal3MachineTemplate
// whose Metal3DataTemplate rotates must name the replacement, and that is
// drift of the machine template itself, corrected by its own strategy.
func EffectiveDesired(desired *unstructured.Unstructured, renames map[pair.ID]string) (*unstructured.Unstructured, error) {
	var all []diff.Change
	for from, to := range renames {
		changes, err := pair.Repoint(desired, from, to)
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
