package controllers_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/internal/target"
)

// TestConfirmedDriftIsAskedOnce: after a locked Metal3DataTemplate is
// rotated, its original keeps a drift that the server confirms on every
// pass (the in-place dry-run is refused, the dry-run create answers). The
// answers are remembered (target.DryRunMemo): a pass that finds the same
// original asks no dry-run. A change to the original, the TTL, a change of
// the cluster's CRDs (Reset) and a failed write each make the next pass ask
// again.
func TestConfirmedDriftIsAskedOnce(t *testing.T) {
	w := newWorld(t, scenario{annotations: enabled, live: metaLive, release: metaRelease, applyMethod: "csa"})
	g := w.g
	g.Expect(w.reconcile()).To(Equal(8), "the move block, 2 replacements, 2 m3mt patches, 2 superseded marks, the lift")
	memo := w.answers
	now := time.Now()
	memo.Now = func() time.Time { return now }
	// asked runs a pass that must write nothing and returns the dry-runs
	// it sent.
	asked := func() int32 {
		t.Helper()
		before := w.dryRuns.Load()
		g.Expect(w.reconcile()).To(BeZero())
		return w.dryRuns.Load() - before
	}

	g.Expect(asked()).To(BeNumerically(">=", 2), "the originals changed (superseded mark): each is asked in place again; the dry-run create of the same object is still answered")
	// The Metal3 manager may still write the originals' status once.
	g.Eventually(asked, 30*time.Second, 200*time.Millisecond).Should(BeZero(), "the same originals: remembered")
	g.Expect(memo.Len()).To(Equal(4), "two answers per rotated original: the in-place dry-run and the dry-run create")
	g.Expect(asked()).To(BeZero())
	g.Expect(memo.Hits()).To(BeNumerically(">=", 4))

	t.Log("a change to one original asks about it again, and only about it")
	orig := w.get(m3, "Metal3DataTemplate", "mgmt-md0-metadata")
	patch := client.MergeFrom(orig.DeepCopy())
	orig.SetLabels(map[string]string{"touched": "yes"})
	g.Expect(env.Client.Patch(w.ctx, orig, patch)).To(Succeed())
	// The touched original is asked in place again (its create is the
	// same object); the Metal3 manager, which reconciles on the touch, may
	// write an original's status meanwhile, which asks about it once more.
	g.Expect(asked()).To(BeNumerically(">=", 1), "the touched original: the in-place dry-run")
	g.Eventually(asked, 30*time.Second, 200*time.Millisecond).Should(BeZero(), "the touched original: remembered again")

	t.Log("past the TTL, every answer is asked again")
	now = now.Add(target.DefaultDryRunTTL)
	g.Expect(asked()).To(Equal(int32(4)))
	g.Expect(asked()).To(BeZero())

	t.Log("the CRDs changed: every answer is asked again")
	memo.Reset()
	g.Expect(memo.Len()).To(BeZero())
	g.Expect(asked()).To(Equal(int32(4)))
	g.Expect(memo.Len()).To(Equal(4))

	t.Log("a failed write forgets the answers of its namespace")
	m3mt := w.get(m3, "Metal3MachineTemplate", "mgmt-md0")
	patch = client.MergeFrom(m3mt.DeepCopy())
	g.Expect(unstructured.SetNestedField(m3mt.Object, "http://drifted.example/image.qcow2", "spec", "template", "spec", "image", "url")).To(Succeed())
	g.Expect(env.Client.Patch(w.ctx, m3mt, patch)).To(Succeed())
	w.failAfter.Store(w.writes.Load())
	w.reconcile()
	g.Expect(w.lastErr).To(MatchError(errCrash))
	g.Expect(memo.Len()).To(BeZero(), "forgotten: the server may answer otherwise now")
	w.failAfter.Store(-1)
	g.Expect(w.reconcile()).To(Equal(1), "the drifted Metal3MachineTemplate is corrected in place")
	g.Expect(asked()).To(BeZero(), "the originals' answers again, and the corrected Metal3MachineTemplate has no drift left to confirm")
}
