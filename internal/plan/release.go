package plan

import (
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/manifest"
)

// ReleaseInput is what the decisions that span the release are made from,
// once each template is decided on its own (DecideTemplate, in dependency
// order, since a template's desired object names the replacements of the
// templates before it).
type ReleaseInput struct {
	Options Options
	// Act is true when the pass may write.
	Act     bool
	Release Release
	// Templates are the templates' decisions, in dependency order.
	Templates []TemplatePlan
	// Consumers are the live objects of the manifest's consumers; those
	// missing live are left out.
	Consumers []*unstructured.Unstructured
	// Replaces maps each replacement the add-on made to its original
	// (Replacements of Kinds).
	Replaces map[manifest.ID]manifest.ID
	// Kinds are the live objects of the release's template kinds in its
	// namespaces, and Users who uses them (IndexUsers), for the clean-up.
	Kinds []*unstructured.Unstructured
	Users Users
	// BudgetSpent is true when the fleet's rollout budget leaves this
	// release no rollout to start: its corrections that roll Machines wait.
	BudgetSpent bool
}

// DecideRelease makes a pass's final decisions from the templates'
// decisions and the live consumers: where each consumer must point, the
// consumers another Helm release owns, which corrections roll machines,
// which consumers had been set back, the way back to an original that
// matches the manifest again, and the clean-up. The Decisions it returns
// are final: nothing changes them after, and every reporter reads them as
// they are.
func DecideRelease(in ReleaseInput) (Decisions, error) {
	d := Decisions{Options: in.Options, Act: in.Act}
	var own []*unstructured.Unstructured
	for _, live := range in.Consumers {
		if owner, ok := OwnedByAnother(live, in.Release.Name, in.Release.Namespace); ok {
			d.Conflicts = append(d.Conflicts, Conflict{ID: manifest.IDOf(live), Owner: owner})
			continue
		}
		own = append(own, live)
	}
	consumers, err := decideConsumers(own, in.Templates, in.Replaces)
	if err != nil {
		return Decisions{}, err
	}
	templates := FinishTemplates(in.Templates, consumers)
	rollouts := rolloutsOf(templates, consumers, in.Replaces)
	d.Approvals = consent(rollouts, in.Options, in.BudgetSpent, madeOn(own))
	if held := holdBack(in.Templates, rollouts); held != nil {
		// The corrections that wait are decided again as if they had no
		// target: their consumers stay where they are, nothing is written.
		if consumers, err = decideConsumers(own, held, in.Replaces); err != nil {
			return Decisions{}, err
		}
		templates = FinishTemplates(held, consumers)
	}
	d.Templates, d.Consumers = withRollouts(templates, rollouts), recordRollouts(consumers, rollouts)
	if in.Options.Prune {
		current := map[manifest.ID]bool{}
		for _, t := range d.Templates {
			if t.RenameTo() != "" {
				current[manifest.ID{GroupKind: t.ID.GroupKind, Namespace: t.ID.Namespace, Name: t.RenameTo()}] = true
			}
		}
		d.Prune = DecidePrune(in.Kinds, in.Users, current, in.Release)
	}
	return d, nil
}

// decideConsumers decides every consumer of the release (DecideConsumer)
// against the targets of templates.
func decideConsumers(live []*unstructured.Unstructured, templates []TemplatePlan, replaces map[manifest.ID]manifest.ID) ([]ConsumerPlan, error) {
	targets := Destinations(templates)
	out := make([]ConsumerPlan, 0, len(live))
	for _, l := range live {
		cp, err := DecideConsumer(l, targets, replaces)
		if err != nil {
			return nil, err
		}
		out = append(out, cp)
	}
	return out, nil
}

// FinishTemplates returns the templates' decisions completed with what
// the consumers' decisions say about them (finishTemplate). The templates
// given are not changed.
func FinishTemplates(templates []TemplatePlan, consumers []ConsumerPlan) []TemplatePlan {
	out := make([]TemplatePlan, 0, len(templates))
	for _, t := range templates {
		out = append(out, finishTemplate(t, consumers))
	}
	return out
}

// finishTemplate returns t completed with what the consumers say about it:
// whether its correction rolls machines and whether a consumer had set it
// back (rollouts), whether consumers are behind a rotation that is done
// (moved), and the way back (restored). t itself is not changed.
func finishTemplate(t TemplatePlan, consumers []ConsumerPlan) TemplatePlan {
	t.Writes = slices.Clone(t.Writes)
	var reverted bool
	t.RollsMachines, reverted = rollouts(t, consumers)
	if t.Rotation != nil {
		r := *t.Rotation
		r.Reverted = reverted
		r.ConsumersBehind = !t.Outcome.Differs() && moved(t, consumers)
		t.Rotation = &r
	}
	if restorable(t) {
		var rolls bool
		t.Restored, rolls = restored(t, consumers)
		t.RollsMachines = t.RollsMachines || rolls
		// The mark goes even when no consumer moves: a pass that crashed
		// between the repoints and the unmark finishes here.
		if _, marked := t.Live.GetAnnotations()[api.SupersededByAnnotation]; marked {
			t.Writes = append(t.Writes, WriteUnmark)
		}
	}
	return t
}

// rollouts says whether t's correction rolls machines (a MachineDeployment
// or control plane references the original or its replacement, live) and
// whether a consumer had set it back. It is computed from the live
// references, not from the pass's writes, so the report is the same on the
// pass that rotates and on every pass after it.
func rollouts(t TemplatePlan, consumers []ConsumerPlan) (rolls, reverted bool) {
	rolls = t.RollsMachines
	replacement := manifest.ID{GroupKind: t.ID.GroupKind, Namespace: t.ID.Namespace, Name: t.RenameTo()}
	for _, cp := range consumers {
		reverted = reverted || slices.Contains(cp.RevertedFrom, t.ID)
		if t.RenameTo() == "" || !manifest.RollsMachines(cp.ID.GroupKind) {
			continue
		}
		refs, _ := manifest.References(cp.Live) // DecideConsumer already read them without error
		for _, r := range refs {
			if r.Template == t.ID || r.Template == replacement {
				rolls = true
			}
		}
	}
	return rolls, reverted
}

// moved reports whether a consumer of the release moves a reference to
// t's target this pass.
func moved(t TemplatePlan, consumers []ConsumerPlan) bool {
	for _, cp := range consumers {
		if slices.Contains(cp.Moves, t.ID) {
			return true
		}
	}
	return false
}

// restorable reports whether t may be the way back: it matches the
// manifest and no rotation of it is in effect.
func restorable(t TemplatePlan) bool {
	return t.RenameTo() == "" && t.Live != nil && (t.Outcome == OutcomeInSync || t.Outcome == OutcomeCorrected)
}

// restored says whether a consumer of the release moves back to t from
// one of its replacements this pass, and whether that rolls machines.
func restored(t TemplatePlan, consumers []ConsumerPlan) (moves, rolls bool) {
	for _, cp := range consumers {
		if slices.Contains(cp.RestoredTo, t.ID) {
			moves = true
			rolls = rolls || manifest.RollsMachines(cp.ID.GroupKind)
		}
	}
	return moves, rolls
}

// OwnObjects names the objects that are the release's own users of its
// templates: its templates, its consumers (but one another Helm release
// owns, which is a user outside the release), and the replacements of its
// templates. Only objects outside it hold a rotated original.
// liveConsumers maps the manifest's consumers to their live objects (nil
// when missing).
func OwnObjects(templates []*unstructured.Unstructured, liveConsumers map[manifest.ID]*unstructured.Unstructured, replaces map[manifest.ID]manifest.ID, rel Release) map[manifest.ID]bool {
	own := map[manifest.ID]bool{}
	for _, t := range templates {
		own[manifest.IDOf(t)] = true
	}
	for id, live := range liveConsumers {
		if live == nil {
			own[id] = true
			continue
		}
		if _, others := OwnedByAnother(live, rel.Name, rel.Namespace); !others {
			own[id] = true
		}
	}
	for r, o := range replaces {
		if own[o] {
			own[r] = true
		}
	}
	return own
}
