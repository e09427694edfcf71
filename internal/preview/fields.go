package preview

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/templatedrift/template-drift-controller/internal/diff"
)

// FieldChange is one field an upgrade changes: its JSON pointer, its live
// value and the value the server would store. Before is absent for a field
// the upgrade adds, After for one it removes.
type FieldChange struct {
	Path   string `json:"path"`
	Op     string `json:"op"`
	Before any    `json:"before,omitempty"`
	After  any    `json:"after,omitempty"`
}

// Hidden stands for a Secret's values, which a preview never prints.
const Hidden = "(hidden)"

// fieldChanges compares the object live with what the server would store
// after the upgrade, over every top-level field but metadata and status
// (the API server's, Helm's and the controllers'), with the limits of the
// TemplatesInSync condition: at most diff.SummaryMaxChanges changes, and
// how many more there are. A Secret's values are Hidden.
func fieldChanges(live, after *unstructured.Unstructured) ([]FieldChange, int) {
	if live == nil || after == nil {
		return nil, 0
	}
	var roots []string
	for _, o := range []*unstructured.Unstructured{live, after} {
		for k := range o.Object {
			if k != "apiVersion" && k != "kind" && !slices.Contains(roots, k) {
				roots = append(roots, k)
			}
		}
	}
	slices.Sort(roots)
	// Previous is live, so a field that the upgrade drops is a remove.
	changes := diff.Object(after, live, diff.Options{Previous: live, Roots: roots})
	secret := live.GroupVersionKind().GroupKind().String() == "Secret"
	out := make([]FieldChange, 0, min(len(changes), diff.SummaryMaxChanges))
	for _, c := range changes[:min(len(changes), diff.SummaryMaxChanges)] {
		fc := FieldChange{Path: c.Path, Op: string(c.Op), Before: c.Before, After: c.After}
		if secret {
			fc.Before, fc.After = hide(c.Op != diff.OpAdd), hide(c.Op != diff.OpRemove)
		}
		out = append(out, fc)
	}
	return out, len(changes) - len(out)
}

// hide is Hidden for a side that has a value, nil for one that does not.
func hide(present bool) any {
	if present {
		return Hidden
	}
	return nil
}

// fieldLines are an object's changed fields as the TemplatesInSync
// condition writes them ("path: before → after", values cut to
// diff.SummaryMaxValue runes), then "(+N more)".
func fieldLines(o Object) []string {
	lines := make([]string, 0, len(o.Changes)+1)
	for _, c := range o.Changes {
		lines = append(lines, diff.Summary([]diff.Change{{Path: c.Path, Op: diff.Op(c.Op), Before: c.Before, After: c.After}}, diff.SummaryMaxValue, 0))
	}
	if o.MoreChanges > 0 {
		lines = append(lines, fmt.Sprintf("(+%d more)", o.MoreChanges))
	}
	return lines
}
