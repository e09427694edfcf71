package plan

import (
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/manifest"
)

// Replacements indexes the add-on's replacements among live objects: the
// ID of each object carrying api.ReplacesAnnotation, mapped to the ID of
// the original it replaces (same kind, same namespace).
func Replacements(live []*unstructured.Unstructured) map[manifest.ID]manifest.ID {
	out := map[manifest.ID]manifest.ID{}
	for _, o := range live {
		if name := o.GetAnnotations()[api.ReplacesAnnotation]; name != "" {
			id := manifest.IDOf(o)
			out[id] = manifest.ID{GroupKind: id.GroupKind, Namespace: id.Namespace, Name: name}
		}
	}
	return out
}

// DecidePrune picks, among live objects of the release's template kinds,
// the replacements to delete: those the add-on created for this release
// (api.ReplacesAnnotation, and api.SourceReleaseAnnotation naming a
// version of it), that no rotation of this pass uses (current names the
// replacements in effect), that nothing uses (users, whoever owns them),
// that are not already being deleted, and whose delete completes at once
// (DeleteBlocked). Originals are never picked: they belong to the Helm
// release. It is Cluster API's "delete only when unused" for rotations.
func DecidePrune(live []*unstructured.Unstructured, users Users, current map[manifest.ID]bool, rel Release) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range live {
		ann := o.GetAnnotations()
		id := manifest.IDOf(o)
		switch {
		case ann[api.ReplacesAnnotation] == "",
			!OfRelease(ann[api.SourceReleaseAnnotation], rel),
			current[id],
			o.GetDeletionTimestamp() != nil:
			continue
		}
		if _, blocked := DeleteBlocked(o, users[id]); blocked {
			continue
		}
		out = append(out, o)
	}
	sort.Slice(out, func(i, j int) bool { return manifest.IDOf(out[i]).String() < manifest.IDOf(out[j]).String() })
	return out
}

// OfRelease reports whether ref ("<ns>/<name>.v<N>") names a version of rel.
func OfRelease(ref string, rel Release) bool {
	rest, ok := strings.CutPrefix(ref, rel.Namespace+"/"+rel.Name+".v")
	if !ok || rest == "" {
		return false
	}
	for _, c := range rest {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
