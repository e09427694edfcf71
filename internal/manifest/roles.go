package manifest

import (
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Objects are a release's objects sorted by the role they play.
type Objects struct {
	// Templates are the objects of a template kind, ordered so that a
	// template another template references comes before it (a
	// Metal3DataTemplate before the Metal3MachineTemplates that name it):
	// a rotation must be decided before the references to it.
	Templates []*unstructured.Unstructured
	// Consumers are the other objects that reference templates
	// (MachineDeployments and control planes). MachineSets are never here.
	Consumers []*unstructured.Unstructured
	// Clusters are the release's Cluster API Clusters, whose pause the
	// controller respects.
	Clusters []*unstructured.Unstructured
}

// SortByRole sorts objs into Objects. Every other kind is dropped: the
// controller never writes it. It fails, with ErrCrossNamespaceRef, when a
// template or consumer holds a reference that cannot be followed, so every
// later reader of their references may rely on them.
func SortByRole(objs []*unstructured.Unstructured, kinds *KindMatcher) (Objects, error) {
	var out Objects
	for _, o := range objs {
		gk := o.GroupVersionKind().GroupKind()
		switch {
		case kinds.Match(gk):
			out.Templates = append(out.Templates, o)
		case gk == ClusterKind:
			out.Clusters = append(out.Clusters, o)
		case IsConsumer(gk) && gk != MachineSetKind:
			out.Consumers = append(out.Consumers, o)
		}
	}
	for _, o := range append(append([]*unstructured.Unstructured{}, out.Templates...), out.Consumers...) {
		if _, err := References(o); err != nil {
			return Objects{}, err
		}
	}
	out.Templates = referencedFirst(out.Templates)
	return out, nil
}

// referencedFirst orders templates so that referenced ones come first,
// keeping the input order otherwise. Template references are one level deep
// in practice (machine template → data template), but the loop handles any
// acyclic depth; a cycle keeps the input order for its members.
func referencedFirst(templates []*unstructured.Unstructured) []*unstructured.Unstructured {
	index := map[ID]int{}
	for i, t := range templates {
		index[IDOf(t)] = i
	}
	depth := make([]int, len(templates))
	for round := 0; round < len(templates); round++ {
		changed := false
		for i, t := range templates {
			refs, _ := References(t) // checked by SortByRole
			for _, r := range refs {
				if j, ok := index[r.Template]; ok && j != i && depth[j] <= depth[i] {
					depth[j] = depth[i] + 1
					changed = true
				}
			}
		}
		if !changed {
			break
		}
	}
	out := make([]*unstructured.Unstructured, len(templates))
	copy(out, templates)
	pos := map[*unstructured.Unstructured]int{}
	for i, t := range templates {
		pos[t] = i
	}
	sort.SliceStable(out, func(i, j int) bool { return depth[pos[out[i]]] > depth[pos[out[j]]] })
	return out
}
