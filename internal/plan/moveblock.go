package plan

import (
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/diff"
)

// MoveBlock is what a pass does with clusterctl's block-move annotation
// (api.BlockMoveAnnotation) on the release's Clusters.
//
// A correction of several writes (a rotation: create, repoint, mark; a
// recreate: delete, create; a prune beside a repoint) leaves the namespace
// half done between its writes. `clusterctl move` pauses the Clusters and
// then copies every object of the namespace; the pause gate is read when
// a pass starts, so a move that starts during the writes would copy the
// half-done state. clusterctl waits, after pausing, for every object that
// carried the annotation when it listed them. So a pass sets a move block
// (the annotation, valued api.ControllerName) on the Clusters of a
// namespace before the first of such writes there, and lifts it when it
// ends, or keeps it while a failed pass leaves the correction unfinished
// (PassScript.Lifts).
type MoveBlock struct {
	// Block are the live Clusters to block before the pass's first write.
	Block []*unstructured.Unstructured
	// Unblock are the Clusters whose move block the pass lifts when it
	// ends: those it blocks, and those carrying a move block of an earlier
	// pass that did not end (a crash between setting and lifting it).
	Unblock []*unstructured.Unstructured
}

// DecideMoveBlock decides the move blocks of one pass from its steps
// (without the blocks) and the release's live Clusters. A namespace gets
// its Clusters blocked when the steps make more than one write there that
// belongs to a correction of several writes (Step.Chained): a
// replacement's create, a consumer's repoint, a superseded-by mark or its
// removal, a recreate's delete and create, a prune. An in-place patch, or
// the create of a missing template, is whole in one write, and a move that
// copies it before or after loses nothing. A Cluster that another
// controller blocks (another value) is neither blocked again nor
// unblocked: the move waits for it anyway, and the annotation is not the
// add-on's to remove.
func DecideMoveBlock(steps []Step, clusters []*unstructured.Unstructured) MoveBlock {
	writes := map[string]int{}
	for _, s := range steps {
		if s.Chained {
			writes[s.ID.Namespace] += s.Writes()
		}
	}
	var out MoveBlock
	for _, cl := range clusters {
		if cl == nil {
			continue
		}
		by, blocked := cl.GetAnnotations()[api.BlockMoveAnnotation]
		switch {
		case blocked && by == api.ControllerName:
			out.Unblock = append(out.Unblock, cl)
		case blocked:
			continue
		case writes[cl.GetNamespace()] > 1:
			out.Block = append(out.Block, cl)
			out.Unblock = append(out.Unblock, cl)
		}
	}
	sortByKey(out.Block)
	sortByKey(out.Unblock)
	return out
}

// ClusterPaused reports whether a live Cluster is paused (spec.paused, or
// the cluster.x-k8s.io/paused annotation). Read just before the move block, a
// paused Cluster means clusterctl may already be copying its namespace:
// the pass then makes none of its writes.
func ClusterPaused(cluster *unstructured.Unstructured) bool {
	return isPaused(cluster)
}

// BlockMoveChanges sets the add-on's move block on a Cluster.
func BlockMoveChanges(cluster *unstructured.Unstructured) []diff.Change {
	return annotate(cluster, map[string]string{api.BlockMoveAnnotation: api.ControllerName})
}

// UnblockMoveChanges lifts the add-on's move block from a Cluster.
func UnblockMoveChanges() []diff.Change {
	return []diff.Change{{Path: diff.Pointer("metadata", "annotations", api.BlockMoveAnnotation), Op: diff.OpRemove}}
}

func sortByKey(objs []*unstructured.Unstructured) {
	sort.Slice(objs, func(i, j int) bool {
		if objs[i].GetNamespace() != objs[j].GetNamespace() {
			return objs[i].GetNamespace() < objs[j].GetNamespace()
		}
		return objs[i].GetName() < objs[j].GetName()
	})
}
