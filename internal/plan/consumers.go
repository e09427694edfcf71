package plan

import (
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/diff"
	"github.com/templatedrift/template-drift-controller/internal/manifest"
)

// Rotation is a rotation in effect: consumers of From must reference To.
type Rotation struct {
	From manifest.ID
	To   string
	// Marked is true when the original already carried the superseded-by
	// annotation before this pass, so a consumer still pointing at it was
	// set back (by Helm, or a person) after an earlier repoint.
	Marked bool
}

// ConsumerPlan is the decision for one consumer (MachineDeployment or
// control plane) of the release.
type ConsumerPlan struct {
	ID manifest.ID
	// Live is the consumer as read this pass.
	Live    *unstructured.Unstructured
	Changes []diff.Change
	// Reverted is true when a reference had been repointed before and was
	// found set back; RevertedFrom names the originals it was set back to.
	Reverted     bool
	RevertedFrom []manifest.ID
	// Rolls is true when the repoint rolls machines.
	Rolls bool
}

// DecideConsumer returns the reference rewrites live needs. Consumers are
// read live: what matters is what the object references now.
func DecideConsumer(live *unstructured.Unstructured, rotations []Rotation) (ConsumerPlan, error) {
	p := ConsumerPlan{ID: manifest.IDOf(live), Live: live}
	for _, r := range rotations {
		changes, err := manifest.Repoint(live, r.From, r.To)
		if err != nil {
			return p, err
		}
		if len(changes) == 0 {
			continue
		}
		p.Changes = append(p.Changes, changes...)
		if r.Marked {
			p.Reverted = true
			p.RevertedFrom = append(p.RevertedFrom, r.From)
		}
		p.Rolls = p.Rolls || manifest.RollsMachines(p.ID.GroupKind)
	}
	return p, nil
}

// IsMarked reports whether live carries the superseded-by annotation naming to.
func IsMarked(live *unstructured.Unstructured, to string) bool {
	return live != nil && live.GetAnnotations()[api.SupersededByAnnotation] == to
}

// MarkRollouts records on each template whether its correction rolls
// machines (a MachineDeployment or control plane references the original
// or its replacement, live) and whether a consumer had set it back. It is
// computed from the live references, not from the pass's writes, so the
// report is the same on the pass that rotates and on every pass after it.
func MarkRollouts(templates []TemplatePlan, consumers []ConsumerPlan) {
	for i := range templates {
		t := &templates[i]
		for _, cp := range consumers {
			t.Reverted = t.Reverted || slices.Contains(cp.RevertedFrom, t.ID)
			if t.RenameTo == "" || !manifest.RollsMachines(cp.ID.GroupKind) {
				continue
			}
			refs, _ := manifest.References(cp.Live) // DecideConsumer already read them without error
			for _, r := range refs {
				replacement := manifest.ID{GroupKind: t.ID.GroupKind, Namespace: t.ID.Namespace, Name: t.RenameTo}
				if r.Target == t.ID || r.Target == replacement {
					t.RollsMachines = true
				}
			}
		}
	}
}
