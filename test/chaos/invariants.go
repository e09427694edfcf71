package chaos

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/templatedrift/template-drift-controller/api"
)

// The invariants every scenario checks once its faults stopped, by the
// names the matrix gives them.
const (
	// InvConverged: every opted-in HelmRelease reports TemplatesInSync=True,
	// or the non-True reason the scenario expects, within the timeout.
	InvConverged = "converged"
	// InvUnique: no template has two replacements, and no consumer names a
	// template that does not exist.
	InvUnique = "unique"
	// InvComplete: nothing half-done: no template Terminating, no
	// replacement that nothing uses, no dry-run probe stored, no template of
	// a manifest missing.
	InvComplete = "complete"
	// InvPreconditions: every update and patch of the controller carries a
	// resourceVersion, every delete a UID and a resourceVersion (audit log).
	InvPreconditions = "preconditions"
	// InvScope: every write of the controller is to a template or consumer
	// of an opted-in release, a replacement of one, a HelmRelease's status,
	// or an event (audit log).
	InvScope = "scope"
)

// Invariants are every invariant, in the matrix's order.
var Invariants = []string{InvConverged, InvUnique, InvComplete, InvPreconditions, InvScope}

// Violation is one breach of an invariant.
type Violation struct {
	// Invariant is one of Invariants.
	Invariant string
	// What names the object or request and what is wrong with it.
	What string
}

func (v Violation) String() string { return v.Invariant + ": " + v.What }

// probeSuffix ends the name of the add-on's dry-run creates
// (internal/apply/dryrun.go): such an object must never be stored.
const probeSuffix = "-tdc-probe"

// ref is where a consumer names a template: the kind and the path of the
// {kind, name} reference, or a fixed kind and the path of the name.
type ref struct {
	kind string
	path []string
}

// refsByKind lists the references of the fixture chart's consumers.
var refsByKind = map[string][]ref{
	"KubeadmControlPlane": {{path: []string{"spec", "machineTemplate", "spec", "infrastructureRef"}}},
	"MachineDeployment": {
		{path: []string{"spec", "template", "spec", "infrastructureRef"}},
		{path: []string{"spec", "template", "spec", "bootstrap", "configRef"}},
	},
	"Metal3MachineTemplate": {{kind: "Metal3DataTemplate", path: []string{"spec", "template", "spec", "dataTemplate", "name"}}},
}

// References returns the templates u names, in its namespace.
func References(u *unstructured.Unstructured) []ObjectKey {
	var out []ObjectKey
	for _, r := range refsByKind[u.GetKind()] {
		if r.kind != "" {
			if name, _, _ := unstructured.NestedString(u.Object, r.path...); name != "" {
				out = append(out, ObjectKey{Namespace: u.GetNamespace(), Kind: r.kind, Name: name})
			}
			continue
		}
		m, _, _ := unstructured.NestedStringMap(u.Object, r.path...)
		if m["name"] != "" {
			out = append(out, ObjectKey{Namespace: u.GetNamespace(), Kind: m["kind"], Name: m["name"]})
		}
	}
	return out
}

func keyOf(u *unstructured.Unstructured) ObjectKey {
	return ObjectKey{Namespace: u.GetNamespace(), Kind: u.GetKind(), Name: u.GetName()}
}

// CheckLive checks the live templates and consumers of the fleet's
// namespaces (objs, every object of the chart's kinds) against the unique
// and complete invariants.
func CheckLive(objs []unstructured.Unstructured, f Fleet) []Violation {
	live := map[ObjectKey]*unstructured.Unstructured{}
	used := map[ObjectKey]bool{}
	for i := range objs {
		u := &objs[i]
		live[keyOf(u)] = u
		for _, k := range References(u) {
			used[k] = true
		}
	}
	var out []Violation
	add := func(inv, format string, args ...any) { out = append(out, Violation{inv, fmt.Sprintf(format, args...)}) }
	replacements := map[ObjectKey][]string{}
	for i := range objs {
		u := &objs[i]
		k := keyOf(u)
		if !IsTemplateKind(k.Kind) {
			continue
		}
		if u.GetDeletionTimestamp() != nil {
			add(InvComplete, "%s is Terminating (finalizers %v)", k, u.GetFinalizers())
		}
		if strings.HasSuffix(k.Name, probeSuffix) {
			add(InvComplete, "%s is a dry-run probe, stored", k)
		}
		if orig := u.GetAnnotations()[api.ReplacesAnnotation]; orig != "" {
			o := ObjectKey{Namespace: k.Namespace, Kind: k.Kind, Name: orig}
			replacements[o] = append(replacements[o], k.Name)
			if !used[k] {
				add(InvComplete, "%s, a replacement of %s, is an orphan: nothing uses it", k, orig)
			}
		}
	}
	for o, names := range replacements {
		if len(names) > 1 {
			slices.Sort(names)
			add(InvUnique, "%s has %d replacements: %s", o, len(names), strings.Join(names, ", "))
		}
	}
	for k := range used {
		if live[k] == nil {
			add(InvUnique, "a consumer names %s, which does not exist", k)
		}
	}
	for _, k := range f.Objects {
		if live[k] == nil && IsTemplateKind(k.Kind) {
			add(InvComplete, "%s of the release manifest is missing", k)
		}
	}
	slices.SortFunc(out, func(a, b Violation) int { return strings.Compare(a.String(), b.String()) })
	return out
}
