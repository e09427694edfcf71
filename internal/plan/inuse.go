package plan

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/templatedrift/template-drift-controller/internal/manifest"
)

// Metal3DataTemplateFinalizer is the finalizer CAPM3 puts on every
// Metal3DataTemplate. Its controller removes it once no Metal3DataClaim and
// no Metal3Data names the template (reconcileDelete), so it is the one
// finalizer whose release the add-on can predict; the integration test
// TestDataTemplateFinalizerPredicted checks both cases against the real
// CAPM3 manager.
const Metal3DataTemplateFinalizer = "metal3datatemplate.infrastructure.cluster.x-k8s.io"

// User is a live object that references templates, whoever owns it: a
// consumer (MachineDeployment, MachinePool, control plane, a machine
// template naming a data template) or a holder (MachineSet,
// Metal3DataClaim, Metal3Data).
type User struct {
	ID   manifest.ID
	Refs []manifest.Ref
	// Own is true for an object of this release's manifest: only those are
	// ever repointed.
	Own bool
}

// Users indexes the users gathered in a pass by the templates they name.
type Users map[manifest.ID][]User

// IndexUsers reads the references of every live object in objs. own names
// the objects of the release's manifest. An object whose references cannot
// be read (one naming another namespace) is skipped: it cannot use a
// template of this namespace.
func IndexUsers(objs []*unstructured.Unstructured, own map[manifest.ID]bool) Users {
	out := Users{}
	for _, o := range objs {
		refs, err := manifest.References(o)
		if err != nil || len(refs) == 0 {
			continue
		}
		u := User{ID: manifest.IDOf(o), Refs: refs, Own: own[manifest.IDOf(o)]}
		seen := map[manifest.ID]bool{}
		for _, r := range refs {
			if !seen[r.Template] {
				seen[r.Template] = true
				out[r.Template] = append(out[r.Template], u)
			}
		}
	}
	for id := range out {
		sort.Slice(out[id], func(i, j int) bool { return out[id][i].ID.String() < out[id][j].ID.String() })
	}
	return out
}

// Holders returns the users of target that are consumers outside the
// release: they keep a rotated original in use, and the add-on never
// repoints them. Holders are not among them: Cluster API replaces the
// MachineSets, and CAPM3 the claims, as the release's consumers roll.
func (u Users) Holders(target manifest.ID) []manifest.ID {
	var out []manifest.ID
	for _, x := range u[target] {
		if !x.Own && manifest.IsConsumer(x.ID.GroupKind) {
			out = append(out, x.ID)
		}
	}
	return out
}

// DeleteBlocked decides from the gathered facts whether deleting live
// would complete at once, and when it would not, says what holds it. A
// template that anything still uses would leave that user pointing at
// nothing, so it is "delete only when unused", as Cluster API deletes
// ClusterClass templates. A finalizer blocks, unless it is CAPM3's
// Metal3DataTemplate finalizer on a template no claim or Metal3Data names
// (its controller then releases it at once); any other finalizer's release
// cannot be predicted.
func DeleteBlocked(live *unstructured.Unstructured, users []User) (string, bool) {
	var why []string
	if len(users) > 0 {
		why = append(why, "it is in use by "+describeUsers(users))
	}
	for _, f := range live.GetFinalizers() {
		if f == Metal3DataTemplateFinalizer && live.GroupVersionKind().GroupKind() == manifest.Metal3DataTemplateKind {
			// CAPM3 releases it at once unless a claim or Metal3Data
			// names the template; only then does it hold the delete.
			if claimed(users) {
				why = append(why, fmt.Sprintf("finalizer %s keeps it until no Metal3DataClaim or Metal3Data names it", f))
			}
			continue
		}
		why = append(why, fmt.Sprintf("finalizer %s keeps it for as long as its controller decides", f))
	}
	if len(why) == 0 {
		return "", false
	}
	return strings.Join(why, "; "), true
}

// claimed reports whether a Metal3DataClaim or a Metal3Data is among users.
func claimed(users []User) bool {
	for _, u := range users {
		if u.ID.GroupKind == manifest.Metal3DataClaimKind || u.ID.GroupKind == manifest.Metal3DataKind {
			return true
		}
	}
	return false
}

// describeUsers names users for a message, stably: one per kind by name
// when it is alone, "<n> <Kind>s (<first>, ...)" when there are several.
func describeUsers(users []User) string {
	byKind := map[string][]string{}
	var kinds []string
	for _, u := range users {
		if _, ok := byKind[u.ID.Kind]; !ok {
			kinds = append(kinds, u.ID.Kind)
		}
		byKind[u.ID.Kind] = append(byKind[u.ID.Kind], u.ID.Name)
	}
	sort.Strings(kinds)
	var parts []string
	for _, k := range kinds {
		names := byKind[k]
		sort.Strings(names)
		if len(names) == 1 {
			parts = append(parts, k+" "+names[0])
			continue
		}
		parts = append(parts, fmt.Sprintf("%d %ss (%s, ...)", len(names), k, names[0]))
	}
	return strings.Join(parts, ", ")
}
