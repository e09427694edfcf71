package plan

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/diff"
	"github.com/templatedrift/template-drift-controller/internal/pair"
)

// Rotation is a rotation in effect: consumers of From must reference To.
type Rotation struct {
	From pair.ID
	To   string
	// Marked is true when the original already carried the superseded-by
	// annotation before this pass, so a consumer still pointing at it was
	// set back (by Helm, or a person) after an earlier repoint.
	Marked bool
}

// ConsumerPlan is the decision for one consumer (MachineDeployment or
// control plane) of the release.
type ConsumerPlan struct {
	ID      pair.ID
	Changes []diff.Change
	// Reverted is true when a reference had been repointed before and was
	// found set back; RevertedFrom names the originals it was set back to.
	Reverted     bool
	RevertedFrom []pair.ID
	// Rolls is true when the repoint rolls machines.
	Rolls bool
}

// DecideConsumer returns the reference rewrites live needs. Consumers are
// read live: what matters is what the object references now.
func DecideConsumer(live *unstructured.Unstructured, rotations []Rotation) (ConsumerPlan, error) {
	p := ConsumerPlan{ID: pair.IDOf(live)}
	for _, r := range rotations {
		changes, err := pair.Repoint(live, r.From, r.To)
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
		p.Rolls = p.Rolls || pair.RollsMachines(p.ID.GroupKind)
	}
	return p, nil
}

// IsMarked reports whether live carries the superseded-by annotation naming to.
func IsMarked(live *unstructured.Unstructured, to string) bool {
	return live != nil && live.GetAnnotations()[api.SupersededByAnnotation] == to
}
