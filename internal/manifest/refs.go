package manifest

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/templatedrift/template-drift-controller/internal/diff"
)

// ErrCrossNamespaceRef is returned for a template reference that names
// another namespace. Cluster API forbids it, and following it would let one
// tenant's release repoint another's objects.
var ErrCrossNamespaceRef = errors.New("template reference into another namespace")

// Well-known group kinds the reference table uses.
var (
	MachineDeploymentKind     = schema.GroupKind{Group: "cluster.x-k8s.io", Kind: "MachineDeployment"}
	MachineSetKind            = schema.GroupKind{Group: "cluster.x-k8s.io", Kind: "MachineSet"}
	MachinePoolKind           = schema.GroupKind{Group: "cluster.x-k8s.io", Kind: "MachinePool"}
	ClusterKind               = schema.GroupKind{Group: "cluster.x-k8s.io", Kind: "Cluster"}
	KubeadmControlPlaneKind   = schema.GroupKind{Group: "controlplane.cluster.x-k8s.io", Kind: "KubeadmControlPlane"}
	RKE2ControlPlaneKind      = schema.GroupKind{Group: "controlplane.cluster.x-k8s.io", Kind: "RKE2ControlPlane"}
	Metal3MachineTemplateKind = schema.GroupKind{Group: "infrastructure.cluster.x-k8s.io", Kind: "Metal3MachineTemplate"}
	Metal3DataTemplateKind    = schema.GroupKind{Group: "infrastructure.cluster.x-k8s.io", Kind: "Metal3DataTemplate"}
	Metal3DataClaimKind       = schema.GroupKind{Group: "infrastructure.cluster.x-k8s.io", Kind: "Metal3DataClaim"}
	Metal3DataKind            = schema.GroupKind{Group: "infrastructure.cluster.x-k8s.io", Kind: "Metal3Data"}
)

// machineTemplateRefs are the references of a Machine template
// (MachineDeployment, MachineSet, MachinePool): v1beta1 ObjectReference and
// v1beta2 {apiGroup, kind, name} sit at the same paths.
var machineTemplateRefs = []refField{
	{path: []string{"spec", "template", "spec", "infrastructureRef"}},
	{path: []string{"spec", "template", "spec", "bootstrap", "configRef"}},
}

// refField is where a consumer keeps one template reference. Paths of every
// served API version are listed together: a path absent from an object is
// skipped, so one table serves v1beta1 and v1beta2 shapes alike.
type refField struct {
	path []string
	// implied is the target kind of a reference that may omit its kind and
	// group (Metal3MachineTemplate.dataTemplate carries only a name).
	implied schema.GroupKind
}

// refTable lists the consumers: objects whose template references the
// add-on repoints when they belong to the release.
var refTable = map[schema.GroupKind][]refField{
	MachineDeploymentKind: machineTemplateRefs,
	MachinePoolKind:       machineTemplateRefs,
	// v1beta1 .spec.machineTemplate.infrastructureRef; v1beta2 adds .spec.
	KubeadmControlPlaneKind: {
		{path: []string{"spec", "machineTemplate", "infrastructureRef"}},
		{path: []string{"spec", "machineTemplate", "spec", "infrastructureRef"}},
	},
	// v1alpha1 .spec.infrastructureRef; v1beta1 both it (deprecated) and
	// .spec.machineTemplate.infrastructureRef; v1beta2 .spec.machineTemplate.spec.infrastructureRef.
	RKE2ControlPlaneKind: {
		{path: []string{"spec", "infrastructureRef"}},
		{path: []string{"spec", "machineTemplate", "infrastructureRef"}},
		{path: []string{"spec", "machineTemplate", "spec", "infrastructureRef"}},
	},
	Metal3MachineTemplateKind: {
		{path: []string{"spec", "template", "spec", "dataTemplate"}, implied: Metal3DataTemplateKind},
	},
}

// holdTable lists the objects that reference templates but are never
// repointed: Cluster API owns MachineSets (a MachineSet names the templates
// it clones machines from until its MachineDeployment's rollout deletes it),
// and CAPM3 keeps one Metal3DataClaim per Machine, and the Metal3Data it
// renders for the claim, on the Metal3DataTemplate they were rendered from,
// and holds that template's finalizer while either names it. They make a
// template "in use": it must not be deleted while they exist.
var holdTable = map[schema.GroupKind][]refField{
	MachineSetKind:      machineTemplateRefs,
	Metal3DataClaimKind: {{path: []string{"spec", "template"}, implied: Metal3DataTemplateKind}},
	Metal3DataKind:      {{path: []string{"spec", "template"}, implied: Metal3DataTemplateKind}},
}

// UserKinds lists every kind whose objects may use a template: the
// consumers and the holders, sorted, for the gatherer to list.
func UserKinds() []schema.GroupKind {
	var out []schema.GroupKind
	for _, t := range []map[schema.GroupKind][]refField{refTable, holdTable} {
		for gk := range t {
			out = append(out, gk)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// ReadPaths returns the paths of the spec of a gk object that a pass reads,
// when it reads nothing else of the object's content: the template
// references of a consumer or a holder, and a Cluster's spec.paused (its
// annotations are metadata); for a consumer that rolls Machines also its
// replicas and rollout status (RolloutStatusPaths). It is false for every other kind, templates
// included, whose objects a pass reads whole. A cache may keep only these
// paths of such an object, with its metadata (target.SlimTransform).
func ReadPaths(gk schema.GroupKind) ([][]string, bool) {
	if gk == ClusterKind {
		return [][]string{{"spec", "paused"}}, true
	}
	fields, ok := refTable[gk]
	if !ok {
		fields, ok = holdTable[gk]
	}
	if !ok {
		return nil, false
	}
	out := make([][]string, 0, len(fields)+len(RolloutStatusPaths))
	for _, f := range fields {
		out = append(out, f.path)
	}
	if RollsMachines(gk) {
		out = append(out, RolloutStatusPaths...)
	}
	return out, true
}

// RolloutStatusPaths are the fields of a MachineDeployment, MachinePool or
// control plane that say how many Machines it has and whether a rollout is
// in progress: replicas wanted, Cluster API's count of the Machines it has,
// the up-to-date ones (v1beta2 at status, v1beta1 under status.v1beta2)
// and the generation observed.
var RolloutStatusPaths = [][]string{
	{"spec", "replicas"},
	{"status", "replicas"},
	{"status", "upToDateReplicas"},
	{"status", "v1beta2", "upToDateReplicas"},
	{"status", "observedGeneration"},
}

// IsConsumer reports whether objects of gk may reference templates.
func IsConsumer(gk schema.GroupKind) bool {
	_, ok := refTable[gk]
	return ok
}

// RollsMachines reports whether repointing a reference held by gk rolls
// machines. Repointing a MachineDeployment or a control plane does; an
// in-place edit of another template (Metal3MachineTemplate.dataTemplate)
// only affects machines created later.
func RollsMachines(gk schema.GroupKind) bool {
	return gk == MachineDeploymentKind || gk == MachinePoolKind || gk == KubeadmControlPlaneKind || gk == RKE2ControlPlaneKind
}

// Ref is one template reference found in a consumer.
type Ref struct {
	// Pointer is the JSON pointer of the reference's name field.
	Pointer string
	// Template is the template it names.
	Template ID
}

// References lists the template references obj holds, in table order.
// Holders (MachineSets, Metal3DataClaims, Metal3Data) have references too.
func References(obj *unstructured.Unstructured) ([]Ref, error) {
	gk := obj.GroupVersionKind().GroupKind()
	fields, ok := refTable[gk]
	if !ok {
		fields = holdTable[gk]
	}
	var out []Ref
	for _, f := range fields {
		m, found, err := unstructured.NestedMap(obj.Object, f.path...)
		if err != nil || !found {
			continue
		}
		target, ok := refTarget(m, f.implied)
		if !ok {
			continue
		}
		ns, _ := m["namespace"].(string)
		if ns != "" && ns != obj.GetNamespace() {
			return nil, fmt.Errorf("%w: %s %s/%s .%s names namespace %q",
				ErrCrossNamespaceRef, obj.GetKind(), obj.GetNamespace(), obj.GetName(), strings.Join(f.path, "."), ns)
		}
		target.Namespace = obj.GetNamespace()
		out = append(out, Ref{Pointer: diff.Pointer(append(append([]string{}, f.path...), "name")...), Template: target})
	}
	return out, nil
}

func refTarget(m map[string]any, implied schema.GroupKind) (ID, bool) {
	name, _ := m["name"].(string)
	if name == "" {
		return ID{}, false
	}
	kind, _ := m["kind"].(string)
	group, _ := m["apiGroup"].(string)
	if av, ok := m["apiVersion"].(string); ok && group == "" {
		if gv, err := schema.ParseGroupVersion(av); err == nil {
			group = gv.Group
		}
	}
	if kind == "" {
		kind = implied.Kind
	}
	if group == "" {
		group = implied.Group
	}
	if kind == "" {
		return ID{}, false
	}
	return ID{GroupKind: schema.GroupKind{Group: group, Kind: kind}, Name: name}, true
}

// Repoint returns the changes that make every reference in obj to from name
// toName instead. Only the name changes, so the reference keeps the API
// version or group the chart wrote. It returns no change when obj does not
// reference from, or is no consumer: a holder (a MachineSet) is never
// repointed.
func Repoint(obj *unstructured.Unstructured, from ID, toName string) ([]diff.Change, error) {
	if !IsConsumer(obj.GroupVersionKind().GroupKind()) {
		return nil, nil
	}
	refs, err := References(obj)
	if err != nil {
		return nil, err
	}
	var out []diff.Change
	for _, r := range refs {
		if r.Template != from || from.Name == toName {
			continue
		}
		out = append(out, diff.Change{Path: r.Pointer, Op: diff.OpReplace, Before: from.Name, After: toName})
	}
	return out, nil
}
