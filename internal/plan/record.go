package plan

import (
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/diff"
)

// PatchChanges are the JSON-patch operations of an in-place correction: the
// drifted fields, then the record of the correction (the release it was
// made for, the strategy, and the plan's DriftDigest of the difference), so
// later passes see in the world itself that this template was corrected
// for this release, and which difference was written. A superseded-by mark
// left by an earlier rotation is removed: the template is the one in use
// again, and a later rotation must not mistake its consumers for set back.
func PatchChanges(p TemplatePlan, release string) []diff.Change {
	out := append([]diff.Change{}, p.Changes...)
	record := map[string]string{
		api.SourceReleaseAnnotation: release,
		api.CorrectionAnnotation:    string(StrategyInPlace),
	}
	if p.DriftDigest != "" {
		record[api.CorrectedDriftAnnotation] = p.DriftDigest
	}
	out = append(out, annotate(p.Live, record)...)
	if _, ok := p.Live.GetAnnotations()[api.SupersededByAnnotation]; ok {
		out = append(out, diff.Change{Path: diff.Pointer("metadata", "annotations", api.SupersededByAnnotation), Op: diff.OpRemove})
	}
	return out
}

// MarkChanges sets the superseded-by annotation on a rotated original.
func MarkChanges(p TemplatePlan) []diff.Change {
	return annotate(p.Live, map[string]string{api.SupersededByAnnotation: p.RenameTo()})
}

// UnmarkChanges removes the superseded-by annotation from an original that
// is the one in use again.
func UnmarkChanges() []diff.Change {
	return []diff.Change{{Path: diff.Pointer("metadata", "annotations", api.SupersededByAnnotation), Op: diff.OpRemove}}
}

// annotate returns JSON-patch operations that set annotations on live, with
// a parent that exists: the whole map when live has no annotations.
func annotate(live *unstructured.Unstructured, set map[string]string) []diff.Change {
	if live.GetAnnotations() == nil {
		m := map[string]any{}
		for k, v := range set {
			m[k] = v
		}
		return []diff.Change{{Path: "/metadata/annotations", Op: diff.OpAdd, After: m}}
	}
	var out []diff.Change
	for _, k := range sortedKeys(set) {
		out = append(out, diff.Change{Path: diff.Pointer("metadata", "annotations", k), Op: diff.OpAdd, After: set[k]})
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
