package plan

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/templatedrift/template-drift-controller/api"
)

// PausedClusters names the live Clusters that are paused, by spec.paused or
// by the cluster.x-k8s.io/paused annotation, and that do not carry the
// add-on's move block. A paused Cluster under the add-on's move block was
// paused (by `clusterctl move`) while a correction of the add-on was under
// way there, or cut short by a crash or a failed write: clusterctl waits
// for the block before it copies anything, so the pass goes on, finishes
// that correction and lifts the block. Waiting instead would have the move
// copy the correction half done once the block is gone.
func PausedClusters(live []*unstructured.Unstructured) []string {
	var out []string
	for _, cl := range live {
		if isPaused(cl) && cl.GetAnnotations()[api.BlockMoveAnnotation] != api.ControllerName {
			out = append(out, cl.GetNamespace()+"/"+cl.GetName())
		}
	}
	return out
}

func isPaused(cluster *unstructured.Unstructured) bool {
	if _, ok := cluster.GetAnnotations()[api.ClusterPausedAnnotation]; ok {
		return true
	}
	paused, _, _ := unstructured.NestedBool(cluster.Object, "spec", "paused")
	return paused
}

// UnavailableClusters compares the Clusters the release renders with the
// live ones read for them (those that do not exist left out) and
// names ("<ns>/<name>") the rendered ones missing live and the live ones
// being deleted.
func UnavailableClusters(rendered, live []*unstructured.Unstructured) (missing, deleting []string) {
	found := map[string]bool{}
	for _, cl := range live {
		name := cl.GetNamespace() + "/" + cl.GetName()
		found[name] = true
		if cl.GetDeletionTimestamp() != nil {
			deleting = append(deleting, name)
		}
	}
	for _, cl := range rendered {
		if name := cl.GetNamespace() + "/" + cl.GetName(); !found[name] {
			missing = append(missing, name)
		}
	}
	return missing, deleting
}

// PausedObjects names ("<Kind> <ns>/<name>") the live objects that carry the
// cluster.x-k8s.io/paused annotation, whatever its value, as Cluster API's
// annotations.HasPaused reads it. Nil entries (objects missing live) are
// skipped.
func PausedObjects(live []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range live {
		if o == nil {
			continue
		}
		if _, ok := o.GetAnnotations()[api.ClusterPausedAnnotation]; ok {
			out = append(out, o.GetKind()+" "+o.GetNamespace()+"/"+o.GetName())
		}
	}
	return out
}
