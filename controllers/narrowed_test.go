package controllers_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestNarrowedReads runs the rotation, the second rotation and the
// clean-up with a read cache narrowed to shard=one (--object-label-selector)
// while none of the release's objects carries the label: every get misses
// the cache and reads live, and so do the lists (Target.Outside). The end
// state is the one of a whole cache: the consumers are repointed once per
// rotation and never set back, the first replacement is cleaned up, and
// nothing is duplicated.
// Once the objects carry the label, a steady-state pass reads from the
// informers only; a replacement in use without the label (made before it)
// is read one by one (plan.UnlistedLineage): kept while in use, left by
// the consumers on the way back, and cleaned up once it carries the label
// (unused, nothing names it, and no list shows it until then).
func TestNarrowedReads(t *testing.T) {
	shard := labels.SelectorFromSet(labels.Set{"shard": "one"})
	w := newWorld(t, scenario{annotations: enabled, live: lockedLive, release: lockedRelease, applyMethod: "csa"}, narrowedReads(shard))
	g := w.g
	w.settle()
	first := expectRotated(w, m3, "LockedMachineTemplate", "mgmt-cp").GetName()
	for _, rp := range refPaths {
		g.Expect(str(w.get(rp.apiVersion, rp.kind, rp.name), rp.path...)).To(Equal(first))
	}
	g.Expect(w.list(m3, "LockedMachineTemplate")).To(HaveLen(2), "the original and its replacement")
	g.Expect(w.liveReads.Load()).NotTo(BeZero(), "objects outside the selector are read live")

	t.Log("a quiet pass keeps the rotation: the consumers point at a replacement no list showed")
	before := w.versions()
	g.Expect(w.reconcile()).To(Equal(0))
	g.Expect(w.versions()).To(Equal(before))

	second := settleSecondRotation(w, first)

	t.Log("with the label on every object, a steady-state pass reads from the informers only")
	w.labelAll(labels.Set{"shard": "one"})
	before = w.versions()
	g.Eventually(func() int32 {
		w.liveReads.Store(0)
		g.Expect(w.reconcile()).To(Equal(0))
		return w.liveReads.Load()
	}, 10*time.Second, 200*time.Millisecond).Should(BeZero())
	g.Expect(w.versions()).To(Equal(before))

	t.Log("a replacement in use made before the label (no list shows it) is read one by one, and kept")
	repl := w.get(m3, "LockedMachineTemplate", second)
	base := repl.DeepCopy()
	repl.SetLabels(nil)
	g.Expect(w.tgt.Client.Patch(w.ctx, repl, client.MergeFrom(base))).To(Succeed())
	before = w.versions()
	for pass := 0; pass < 3; pass++ {
		g.Expect(w.reconcile()).To(Equal(0))
	}
	g.Expect(w.versions()).To(Equal(before))
	for _, rp := range refPaths {
		g.Expect(str(w.get(rp.apiVersion, rp.kind, rp.name), rp.path...)).To(Equal(second))
	}
	g.Expect(w.list(m3, "LockedMachineTemplate")).To(HaveLen(2))

	t.Log("the way back moves the consumers off that replacement")
	w.storeAndRecord(3, "deployed", render(lockedLive))
	w.settle()
	for _, rp := range refPaths {
		g.Expect(str(w.get(rp.apiVersion, rp.kind, rp.name), rp.path...)).To(Equal("mgmt-cp"), "%s %s", rp.kind, rp.name)
	}
	g.Expect(w.exists(m3, "LockedMachineTemplate", second)).To(BeTrue(), "unused and outside the selector: no list shows it")

	t.Log("once it carries the label, it is cleaned up")
	repl = w.get(m3, "LockedMachineTemplate", second)
	repl.SetLabels(map[string]string{"shard": "one"})
	g.Expect(w.tgt.Client.Update(w.ctx, repl)).To(Succeed())
	g.Eventually(func() bool { w.reconcile(); return w.exists(m3, "LockedMachineTemplate", second) }, 10*time.Second, 200*time.Millisecond).Should(BeFalse())
	g.Expect(w.condition().Status).To(Equal(metav1.ConditionTrue), w.condition().Message)
}

// labelAll adds set to the labels of every object of the world's template,
// consumer and Cluster kinds, as spec.commonMetadata.labels would.
func (w *world) labelAll(set labels.Set) {
	w.t.Helper()
	for _, k := range [][2]string{
		{m3, "Metal3MachineTemplate"}, {m3, "Metal3DataTemplate"}, {m3, "LockedMachineTemplate"},
		{md, "MachineDeployment"}, {md, "Cluster"}, {cp, "KubeadmControlPlane"},
		{"controlplane.cluster.x-k8s.io/v1beta1", "RKE2ControlPlane"}, {"bootstrap.cluster.x-k8s.io/v1beta2", "KubeadmConfigTemplate"},
	} {
		for _, o := range w.list(k[0], k[1]) {
			// A merge patch of the labels alone: the managers write these
			// objects too, and an update of the listed version may conflict.
			base := o.DeepCopy()
			o.SetLabels(labels.Merge(o.GetLabels(), set))
			w.g.Expect(w.tgt.Client.Patch(w.ctx, &o, client.MergeFrom(base))).To(Succeed())
		}
	}
}

// TestNarrowedInPlaceReadsNothingLive: with every object of the release
// labelled, a pass that corrects templates in place reads nothing from the
// API server: it looks for a rotation's replacement (a name the narrowed
// cache does not hold, so a live get) only when the template rotates
// (plan.ReadsReplacement).
func TestNarrowedInPlaceReadsNothingLive(t *testing.T) {
	w := newWorld(t, scenario{annotations: enabled, live: bootstrap, release: mgmt, applyMethod: "csa"}, narrowedReads(labels.SelectorFromSet(labels.Set{"shard": "one"})))
	w.labelAll(labels.Set{"shard": "one"})
	w.g.Expect(w.reconcile()).To(BeNumerically(">", 0), "the pass corrects")
	w.g.Expect(str(w.get(m3, "Metal3MachineTemplate", "mgmt-md0"), "spec", "template", "spec", "image", "url")).To(Equal(mgmt.ImageURL))
	w.g.Expect(w.liveReads.Load()).To(BeZero(), "no read outside the informers")
}
