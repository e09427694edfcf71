package plan

import (
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/diff"
	"github.com/templatedrift/template-drift-controller/internal/manifest"
)

// Destination is where the release's consumers must point for one template of
// the release: the manifest's name, or the newest replacement while a
// rotation is in effect.
type Destination struct {
	Name string
	// Marked is true when a rotation is in effect and the original already
	// carried the superseded-by annotation naming Name before this pass, so
	// a consumer still pointing at the original was set back (by Helm, or a
	// person) after an earlier repoint.
	Marked bool
}

// Destinations says, for each template of the release, where its
// consumers must point. A rotation points them at its replacement. A
// template that matches the manifest (or is corrected in place this pass)
// points them back at its own name: that is the way back after a rollback,
// for a consumer an earlier rotation left on a replacement. Any other
// template (failed, blocked, skipped, missing, being deleted, waiting for
// its rollout) gets no target: its consumers stay where they are.
func Destinations(templates []TemplatePlan) map[manifest.ID]Destination {
	out := map[manifest.ID]Destination{}
	for _, t := range templates {
		switch {
		case t.Outcome == OutcomeAwaitingRollout:
			// Its consumers stay where they are until it may roll.
		case t.RenameTo() != "":
			out[t.ID] = Destination{Name: t.RenameTo(), Marked: IsMarked(t.Live, t.RenameTo())}
		case t.Outcome == OutcomeInSync || t.Outcome == OutcomeCorrected ||
			(t.Outcome == OutcomeDrifted && t.Strategy == StrategyInPlace):
			out[t.ID] = Destination{Name: t.ID.Name}
		}
	}
	return out
}

// ConsumerPlan is the decision for one consumer of the release.
type ConsumerPlan struct {
	ID manifest.ID
	// Live is the consumer as read this pass.
	Live    *unstructured.Unstructured
	Changes []diff.Change
	// RevertedFrom names the originals a reference had been repointed away
	// from before and was found set back to.
	RevertedFrom []manifest.ID
	// RestoredTo names the originals a reference moves back to from one of
	// their replacements: the way back, once the original matches the
	// manifest again.
	RestoredTo []manifest.ID
	// Moves names the templates of the release whose references this
	// consumer moves to their target this pass, for any reason.
	Moves []manifest.ID
}

// DecideConsumer returns the reference rewrites live needs. Consumers are
// read live: what matters is what the object references now. A reference
// to a template of the release, or to one of its replacements (replaces
// maps a replacement's ID to its original's), that does not name the
// template's target is drift of the consumer's reference. That covers a
// chain of rotations (a consumer left on the first replacement moves to
// the newest) and the way back (the original matches the manifest again).
// A reference to anything else is left alone.
func DecideConsumer(live *unstructured.Unstructured, targets map[manifest.ID]Destination, replaces map[manifest.ID]manifest.ID) (ConsumerPlan, error) {
	p := ConsumerPlan{ID: manifest.IDOf(live), Live: live}
	refs, err := manifest.References(live)
	if err != nil {
		return p, err
	}
	for _, r := range refs {
		original := r.Template
		if o, ok := replaces[r.Template]; ok {
			original = o
		}
		t, ok := targets[original]
		if !ok || r.Template.Name == t.Name {
			continue
		}
		p.Changes = append(p.Changes, diff.Change{Path: r.Pointer, Op: diff.OpReplace, Before: r.Template.Name, After: t.Name})
		if !slices.Contains(p.Moves, original) {
			p.Moves = append(p.Moves, original)
		}
		if r.Template == original && t.Marked && !slices.Contains(p.RevertedFrom, original) {
			p.RevertedFrom = append(p.RevertedFrom, original)
		}
		if t.Name == original.Name && !slices.Contains(p.RestoredTo, original) {
			p.RestoredTo = append(p.RestoredTo, original)
		}
	}
	return p, nil
}

// IsMarked reports whether live carries the superseded-by annotation naming to.
func IsMarked(live *unstructured.Unstructured, to string) bool {
	return live != nil && live.GetAnnotations()[api.SupersededByAnnotation] == to
}
