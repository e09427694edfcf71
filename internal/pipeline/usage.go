package pipeline

import (
	"context"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/templatedrift/template-drift-controller/internal/apply"
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
// every kind that may use a template (manifest.UserKinds) and every
// template kind of the release, and indexes who uses what; which users are
// the release's own is plan.OwnObjects. A list that fails fails the pass:
// without it nothing can be called unused.
func (p *pass) gatherUse(ctx context.Context) (usage, error) {
	type key struct {
		gvk schema.GroupVersionKind
		ns  string
	}
	var namespaces []string
	var templateKinds []key
	seenNS, seenKind := map[string]bool{}, map[key]bool{}
	for _, t := range p.objs.Templates {
		if !seenNS[t.GetNamespace()] {
			seenNS[t.GetNamespace()] = true
			namespaces = append(namespaces, t.GetNamespace())
		}
		if k := (key{t.GroupVersionKind(), t.GetNamespace()}); !seenKind[k] {
			seenKind[k] = true
			templateKinds = append(templateKinds, k)
		}
	}
	// The version the release uses a kind at: a user kind is listed at it,
	// so the list shares the informer (and the objects) of the release's own
	// reads instead of holding a second copy at the preferred version. The
	// reference paths of every served version are known (manifest.refTable).
	released := map[schema.GroupKind]schema.GroupVersionKind{}
	for _, t := range p.objs.Templates {
		if _, ok := released[t.GroupVersionKind().GroupKind()]; !ok {
			released[t.GroupVersionKind().GroupKind()] = t.GroupVersionKind()
		}
	}
	liveConsumers := map[manifest.ID]*unstructured.Unstructured{}
	for _, c := range p.objs.Consumers {
		liveConsumers[manifest.IDOf(c)] = p.live[manifest.IDOf(c)]
		if _, ok := released[c.GroupVersionKind().GroupKind()]; !ok {
			released[c.GroupVersionKind().GroupKind()] = c.GroupVersionKind()
		}
	}
	sort.Strings(namespaces)
	read := p.target.Read()
	u := usage{}
	listed := map[manifest.ID]*unstructured.Unstructured{}
	for _, k := range templateKinds {
		objs, err := apply.List(ctx, read, k.gvk, k.ns)
		if err != nil {
			return u, err
		}
		u.kinds = append(u.kinds, objs...)
		for _, o := range objs {
			listed[manifest.IDOf(o)] = o
		}
	}
	for _, ns := range namespaces {
		for _, gk := range manifest.UserKinds() {
			var objs []*unstructured.Unstructured
			var err error
			gvk, ok := released[gk]
			switch {
			case ok && seenKind[key{gvk, ns}]:
				continue // listed above with the template kinds
			case ok:
				objs, err = apply.List(ctx, read, gvk, ns)
			default:
				objs, err = apply.ListKind(ctx, read, p.target.Client.RESTMapper(), gk, ns)
			}
			if err != nil {
				return u, err
			}
			for _, o := range objs {
				listed[manifest.IDOf(o)] = o
			}
		}
	}
	u.replaces = plan.Replacements(u.kinds)
	own := plan.OwnObjects(p.objs.Templates, liveConsumers, u.replaces, p.planRelease())
	all := make([]*unstructured.Unstructured, 0, len(listed))
	for _, o := range listed {
		all = append(all, o)
	}
	u.users = plan.IndexUsers(all, own)
	return u, nil
}

// otherUserKinds are the kinds and versions gatherUse lists that no
// template or consumer of the release has: the other kinds that may use a
// template, at the server's preferred version. gatherLive names them
// before its first read, so their watches start with the release's own.
// A kind the server does not serve is left out; gatherUse finds it so.
func (p *pass) otherUserKinds() []schema.GroupVersionKind {
	released := map[schema.GroupKind]bool{}
	for _, group := range [][]*unstructured.Unstructured{p.objs.Templates, p.objs.Consumers} {
		for _, o := range group {
			released[o.GroupVersionKind().GroupKind()] = true
		}
	}
	var out []schema.GroupVersionKind
	for _, gk := range manifest.UserKinds() {
		if released[gk] {
			continue
		}
		if mapping, err := p.target.Client.RESTMapper().RESTMapping(gk); err == nil {
			out = append(out, mapping.GroupVersionKind)
		}
	}
	return out
}
