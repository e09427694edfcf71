package plan

import (
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/manifest"
)

// Narrowable reports whether the read cache may hold only the objects of
// gk that --object-label-selector matches: the kinds a release renders
// (templates, consumers and Clusters), which carry the labels a
// HelmRelease's spec.commonMetadata.labels puts on every object it
// renders. The holders (MachineSets, Metal3DataClaims, Metal3Data) are
// never narrowed: Cluster API and CAPM3 make them, without the release's
// labels, and each one makes a template in use.
func Narrowable(gk schema.GroupKind, isTemplate bool) bool {
	if manifest.IsHolder(gk) {
		return false
	}
	return isTemplate || manifest.IsConsumer(gk) || gk == manifest.ClusterKind
}

// UnlistedLineage returns the objects of kinds a pass must read one by one
// because its lists may have missed them (a narrowed read cache holds only
// the objects its selector matches): those objs reference, and the
// originals that a replacement among objs replaces (api.ReplacesAnnotation),
// when they are not in listed. Without them a pass would not know that a
// consumer points at a replacement the add-on made (Replacements), and
// would set the consumer back. A reference that names another namespace is
// left out: the pass reports it where it reads the consumer. Sorted, each
// once.
func UnlistedLineage(objs []*unstructured.Unstructured, listed map[manifest.ID]bool, kinds map[schema.GroupKind]bool) []manifest.ID {
	seen := map[manifest.ID]bool{}
	var out []manifest.ID
	add := func(id manifest.ID) {
		if kinds[id.GroupKind] && !listed[id] && !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	for _, o := range objs {
		if o == nil {
			continue
		}
		if refs, err := manifest.References(o); err == nil {
			for _, r := range refs {
				add(r.Template)
			}
		}
		if name := o.GetAnnotations()[api.ReplacesAnnotation]; name != "" {
			id := manifest.IDOf(o)
			add(manifest.ID{GroupKind: id.GroupKind, Namespace: id.Namespace, Name: name})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Group != out[j].Group {
			return out[i].Group < out[j].Group
		}
		return out[i].String() < out[j].String()
	})
	return out
}
