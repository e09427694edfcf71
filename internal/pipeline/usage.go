package pipeline

import (
	"context"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/plan"
)

// usage is who uses the release's templates, read live in their
// namespaces whoever owns the users: the facts behind "delete only when
// unused", a rotation held by a consumer outside the release, the chains
// of rotations and the clean-up.
type usage struct {
	users plan.Users
	// replaces maps each replacement the add-on made to its original.
	replaces map[manifest.ID]manifest.ID
	// kinds are the live objects of the release's template kinds in the
	// release's namespaces: originals, replacements and strangers alike.
	kinds []*unstructured.Unstructured
}

// gatherUse lists, in each namespace the release's templates live in,
// every template kind of the release and every kind that may use a
// template (manifest.UserKinds), and indexes who uses what; which users are
// the release's own is plan.OwnObjects. A kind of the release is listed at
// the version the release uses it at, any other at the server's. A list
// that fails fails the pass: without it nothing can be called unused.
func (p *pass) gatherUse(ctx context.Context) (usage, error) {
	released := map[schema.GroupKind]schema.GroupVersionKind{}
	inNamespace := map[string][]schema.GroupVersionKind{}
	for _, t := range p.objs.Templates {
		gvk, ns := t.GroupVersionKind(), t.GetNamespace()
		if _, ok := released[gvk.GroupKind()]; !ok {
			released[gvk.GroupKind()] = gvk
		}
		if !slices.Contains(inNamespace[ns], gvk) {
			inNamespace[ns] = append(inNamespace[ns], gvk)
		}
	}
	liveConsumers := map[manifest.ID]*unstructured.Unstructured{}
	for _, c := range p.objs.Consumers {
		liveConsumers[manifest.IDOf(c)] = p.live[manifest.IDOf(c)]
		if _, ok := released[c.GroupVersionKind().GroupKind()]; !ok {
			released[c.GroupVersionKind().GroupKind()] = c.GroupVersionKind()
		}
	}
	u := usage{}
	var all []*unstructured.Unstructured
	seen := map[manifest.ID]bool{}
	for _, ns := range slices.Sorted(maps.Keys(inNamespace)) {
		templateKinds := inNamespace[ns]
		kinds := slices.Clone(templateKinds)
		for _, gk := range manifest.UserKinds() {
			gvk, ok := released[gk]
			if !ok {
				gvk = gk.WithVersion("") // the server's preferred version
			}
			if !slices.Contains(kinds, gvk) {
				kinds = append(kinds, gvk)
			}
		}
		objs, err := p.target.ListEach(ctx, ns, kinds)
		if err != nil {
			return u, err
		}
		for _, o := range objs {
			if id := manifest.IDOf(o); !seen[id] {
				seen[id] = true
				all = append(all, o)
			}
			if slices.Contains(templateKinds, o.GroupVersionKind()) {
				u.kinds = append(u.kinds, o)
			}
		}
	}
	u.replaces = plan.Replacements(u.kinds)
	own := plan.OwnObjects(p.objs.Templates, liveConsumers, u.replaces, p.planRelease())
	u.users = plan.IndexUsers(all, own)
	return u, nil
}
