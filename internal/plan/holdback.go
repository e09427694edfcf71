package plan

// The corrections of a release that roll Machines, found in its decisions,
// and those that may not roll yet held back (consent decides which).

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/manifest"
)

// rolloutsOf finds, for each template, the rollout its correction makes
// this pass: the consumers of the release that roll Machines and move a
// reference to it (or to one of its replacements, replaces) to its target.
// A template none of them moves for makes no rollout.
func rolloutsOf(templates []TemplatePlan, consumers []ConsumerPlan, replaces map[manifest.ID]manifest.ID) map[manifest.ID]*MachineRollout {
	targets := Destinations(templates)
	out := map[manifest.ID]*MachineRollout{}
	for _, t := range templates {
		if !movesMachines(t.ID, consumers) {
			continue
		}
		r := &MachineRollout{To: targets[t.ID].Name}
		for _, cp := range consumers {
			if !manifest.RollsMachines(cp.ID.GroupKind) || !references(cp, t.ID, r.To, replaces) {
				continue
			}
			c := RolledConsumer{ID: cp.ID, Machines: CountMachines(cp.Live)}
			if slices.Contains(cp.Moves, t.ID) {
				c.Made = cp.Live.GetAnnotations()[api.RolloutsMadeAnnotation]
			}
			r.Consumers = append(r.Consumers, c)
		}
		slices.SortFunc(r.Consumers, func(a, b RolledConsumer) int { return strings.Compare(qualified(a.ID), qualified(b.ID)) })
		r.ID = RolloutID(t.ID, r.To, r.Consumers)
		out[t.ID] = r
	}
	return out
}

// movesMachines reports whether a consumer that rolls Machines moves a
// reference to template this pass.
func movesMachines(template manifest.ID, consumers []ConsumerPlan) bool {
	for _, cp := range consumers {
		if manifest.RollsMachines(cp.ID.GroupKind) && slices.Contains(cp.Moves, template) {
			return true
		}
	}
	return false
}

// references reports whether cp references template, the name its
// consumers move to, or one of its replacements.
func references(cp ConsumerPlan, template manifest.ID, to string, replaces map[manifest.ID]manifest.ID) bool {
	dest := manifest.ID{GroupKind: template.GroupKind, Namespace: template.Namespace, Name: to}
	refs, _ := manifest.References(cp.Live) // DecideConsumer already read them without error
	for _, r := range refs {
		if r.Template == template || r.Template == dest || replaces[r.Template] == template {
			return true
		}
	}
	return false
}

// madeOn are the rollout ids the consumers record as made.
func madeOn(consumers []*unstructured.Unstructured) []string {
	var out []string
	for _, c := range consumers {
		out = append(out, madeIDs(c.GetAnnotations()[api.RolloutsMadeAnnotation])...)
	}
	return out
}

// holdBack returns templates with each correction whose rollout waits
// held back: OutcomeAwaitingRollout, with no writes; nil when none waits.
func holdBack(templates []TemplatePlan, rollouts map[manifest.ID]*MachineRollout) []TemplatePlan {
	var out []TemplatePlan
	for i, t := range templates {
		r, ok := rollouts[t.ID]
		if !ok || !r.State.Waits() {
			continue
		}
		if out == nil {
			out = slices.Clone(templates)
		}
		r.Was = t.Outcome
		out[i].Outcome, out[i].Writes, out[i].RollsMachines = OutcomeAwaitingRollout, nil, true
	}
	return out
}

// withRollouts returns templates with their rollouts attached.
func withRollouts(templates []TemplatePlan, rollouts map[manifest.ID]*MachineRollout) []TemplatePlan {
	for i, t := range templates {
		if r, ok := rollouts[t.ID]; ok {
			cp := *r
			templates[i].Rollout = &cp
		}
	}
	return templates
}

// recordRollouts adds to each consumer that moves for a rollout made this
// pass the record of its id (recordChanges).
func recordRollouts(consumers []ConsumerPlan, rollouts map[manifest.ID]*MachineRollout) []ConsumerPlan {
	for i, cp := range consumers {
		if !manifest.RollsMachines(cp.ID.GroupKind) {
			continue
		}
		var ids []string
		for _, moved := range cp.Moves {
			if r, ok := rollouts[moved]; ok && !r.State.Waits() {
				ids = append(ids, r.ID)
			}
		}
		if len(ids) > 0 {
			consumers[i] = recordChanges(cp, ids)
		}
	}
	return consumers
}

// StartsRollouts reports whether the pass makes a correction that rolls
// Machines: the fleet's budget must have room for the release.
func (d Decisions) StartsRollouts() bool {
	for _, t := range d.Templates {
		if t.Rollout != nil && !t.Rollout.State.Waits() {
			return true
		}
	}
	return false
}

// ReleaseRollingOut reports whether a rollout the add-on made is in
// progress in a release: one of its consumers records a made rollout
// (api.RolloutsMadeAnnotation) and is rolling out (RollingOut).
func ReleaseRollingOut(consumers []*unstructured.Unstructured) bool {
	for _, c := range consumers {
		if manifest.RollsMachines(c.GroupVersionKind().GroupKind()) && c.GetAnnotations()[api.RolloutsMadeAnnotation] != "" && RollingOut(c) {
			return true
		}
	}
	return false
}
