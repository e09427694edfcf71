package controllers_test

import (
	"sync"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/api"
)

// blockedCluster returns a liveMutate that puts the block-move annotation,
// with value by, on the Cluster, paused too when pause is set.
func blockedCluster(by string, pause bool) func(*unstructured.Unstructured) {
	return func(o *unstructured.Unstructured) {
		if o.GetKind() != "Cluster" {
			return
		}
		o.SetAnnotations(merge(o.GetAnnotations(), map[string]string{api.BlockMoveAnnotation: by}))
		if pause {
			_ = unstructured.SetNestedField(o.Object, true, "spec", "paused")
		}
	}
}

// TestMoveBlock: a rotation sets a move block on the release's Cluster for
// the length of its writes and lifts it; a move block a pass left behind
// (a crash between setting and lifting it) is lifted by the next pass; on
// a Cluster paused since (clusterctl waits for the block) that pass first
// finishes the correction; a pass that fails after some of its writes
// keeps the block for the pass that finishes them; one that cannot go on
// (a template whose correction fails) lifts it; another controller's
// block-move annotation is left alone; and a Cluster paused between the
// pass's reads and its move block gets no write at all.
func TestMoveBlock(t *testing.T) {
	t.Run("a rotation blocks moves of the Cluster, then lifts the block", func(t *testing.T) {
		w := newWorld(t, scenario{annotations: enabled, live: metaLive, release: metaRelease, applyMethod: "csa"})
		// What the Cluster carries while each template is written.
		var during []string
		w.afterWrite = func(o client.Object) {
			if o.GetObjectKind().GroupVersionKind().Kind != "Cluster" {
				cl := &unstructured.Unstructured{}
				cl.SetAPIVersion(md)
				cl.SetKind("Cluster")
				if err := w.tgt.Client.Get(w.ctx, client.ObjectKey{Namespace: w.ns, Name: "mgmt"}, cl); err == nil {
					during = append(during, cl.GetAnnotations()[api.BlockMoveAnnotation])
				}
			}
		}
		w.g.Expect(w.reconcile()).To(Equal(8), "the move block, 2 replacements, 2 machine templates, 2 superseded-by marks, the lift")
		w.g.Expect(during).To(HaveLen(6))
		w.g.Expect(during).To(HaveEach(api.ControllerName), "blocked during every write of the rotation")
		w.g.Expect(w.get(md, "Cluster", "mgmt").GetAnnotations()).NotTo(HaveKey(api.BlockMoveAnnotation))
		w.g.Expect(w.reconcile()).To(Equal(0), "then in sync")
	})
	t.Run("a move block left behind is lifted", func(t *testing.T) {
		w := newWorld(t, scenario{annotations: enabled, live: mgmt, release: mgmt, applyMethod: "csa",
			liveMutate: blockedCluster(api.ControllerName, false)})
		w.g.Expect(w.reconcile()).To(Equal(1), "the lift")
		w.g.Expect(w.get(md, "Cluster", "mgmt").GetAnnotations()).NotTo(HaveKey(api.BlockMoveAnnotation))
		w.g.Expect(w.condition().Reason).To(Equal(api.NoDriftDetectedReason))
		w.g.Expect(w.reconcile()).To(Equal(0))
	})
	t.Run("a move block left behind on a paused Cluster: the pass finishes the correction, then lifts it", func(t *testing.T) {
		// clusterctl paused the Cluster while a pass held its move block and
		// waits for it: the correction is finished, not left half done.
		w := newWorld(t, scenario{annotations: enabled, live: bootstrap, release: mgmt, applyMethod: "csa",
			liveMutate: blockedCluster(api.ControllerName, true)})
		w.g.Expect(w.reconcile()).To(Equal(3), "2 machine templates in place, the lift")
		w.g.Expect(w.get(md, "Cluster", "mgmt").GetAnnotations()).NotTo(HaveKey(api.BlockMoveAnnotation))
		w.expectImages(mgmt.ImageURL)
		w.g.Expect(w.reconcile()).To(Equal(0), "then the pause gate holds the next pass")
		w.g.Expect(w.condition().Reason).To(Equal(api.ClusterPausedReason))
	})
	t.Run("a pass that fails after some of its writes keeps its move block for the next pass", func(t *testing.T) {
		w := newWorld(t, scenario{annotations: enabled, live: metaLive, release: metaRelease, applyMethod: "csa"})
		// The move block and the first replacement, then a failed write;
		// clusterctl pauses the Cluster before the next pass.
		w.afterWrite = func(o client.Object) {
			if o.GetObjectKind().GroupVersionKind().Kind == "Metal3DataTemplate" {
				w.failAfter.Store(w.writes.Load())
			}
		}
		w.reconcile()
		w.afterWrite = nil
		w.g.Expect(w.lastErr).To(MatchError(errCrash))
		w.g.Expect(w.get(md, "Cluster", "mgmt").GetAnnotations()).To(HaveKeyWithValue(api.BlockMoveAnnotation, api.ControllerName), "kept")
		w.update(md, "Cluster", "mgmt", func(o *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(o.Object, true, "spec", "paused")
		})
		w.failAfter.Store(-1)
		// Conflicts with the Cluster API and Metal3 managers may split the
		// rest over several passes; none of them lifts the block early.
		w.g.Expect(w.settle()).To(Equal(6), "the second replacement, 2 machine templates, 2 superseded-by marks, the lift")
		w.g.Expect(w.get(md, "Cluster", "mgmt").GetAnnotations()).NotTo(HaveKey(api.BlockMoveAnnotation))
		w.expectNoDanglingRefs()
		w.g.Expect(w.reconcile()).To(Equal(0))
		w.g.Expect(w.condition().Reason).To(Equal(api.ClusterPausedReason))
	})
	t.Run("a move block left behind while a template's correction fails is lifted, not held until someone fixes it", func(t *testing.T) {
		// In-place asked for locked data templates: the server refuses it,
		// the correction stops before any write, and would stop every pass.
		w := newWorld(t, scenario{annotations: withStrategy(api.StrategyInPlace), live: metaLive, release: metaRelease, applyMethod: "csa",
			liveMutate: blockedCluster(api.ControllerName, false)})
		w.g.Expect(w.reconcile()).To(Equal(1), "the lift, no correction")
		w.g.Expect(w.get(md, "Cluster", "mgmt").GetAnnotations()).NotTo(HaveKey(api.BlockMoveAnnotation))
		w.g.Expect(w.condition().Reason).To(Equal(api.CorrectionFailedReason))
		w.g.Expect(w.reconcile()).To(Equal(0), "nothing to block or lift after it")
	})
	t.Run("another controller's block-move annotation is left alone", func(t *testing.T) {
		w := newWorld(t, scenario{annotations: enabled, live: metaLive, release: metaRelease, applyMethod: "csa",
			liveMutate: blockedCluster("another-controller", false)})
		w.g.Expect(w.reconcile()).To(Equal(6), "2 replacements, 2 machine templates, 2 superseded-by marks; no write to the Cluster")
		w.g.Expect(w.get(md, "Cluster", "mgmt").GetAnnotations()).To(HaveKeyWithValue(api.BlockMoveAnnotation, "another-controller"))
	})
	t.Run("a Cluster paused before the move block gets no write", func(t *testing.T) {
		w := newWorld(t, scenario{annotations: enabled, live: metaLive, release: metaRelease, applyMethod: "csa"})
		var once sync.Once
		w.onDryRun = func() {
			once.Do(func() {
				w.update(md, "Cluster", "mgmt", func(o *unstructured.Unstructured) {
					_ = unstructured.SetNestedField(o.Object, true, "spec", "paused")
				})
			})
		}
		w.g.Expect(w.reconcile()).To(Equal(0), "no move block and no correction")
		w.g.Expect(w.list(m3, "Metal3DataTemplate")).To(HaveLen(2), "no replacement")
		w.g.Expect(w.get(md, "Cluster", "mgmt").GetAnnotations()).NotTo(HaveKey(api.BlockMoveAnnotation))
		w.g.Expect(w.condition().Reason).To(Equal(api.ClusterPausedReason))
	})
}
