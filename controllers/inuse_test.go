package controllers_test

import (
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/plan"
)

// These tests hold "delete only when unused" and "every consumer" to the
// real Cluster API and Metal3 managers: the MachineSets the real
// MachineDeployment controller creates, and the finalizer the real CAPM3
// controller puts on every Metal3DataTemplate and releases only once no
// Metal3DataClaim or Metal3Data names it.

// createYAML creates the objects of doc in w's namespace, as a person or
// another tool would (no Helm ownership).
func (w *world) createYAML(doc string) {
	w.t.Helper()
	objs, err := manifest.Split(doc, w.ns, 0)
	w.g.Expect(err).NotTo(HaveOccurred())
	for _, o := range objs {
		w.g.Expect(w.tgt.Client.Create(w.ctx, o)).To(Succeed(), "create %s %s", o.GetKind(), o.GetName())
	}
}

// deleteAndWait deletes an object and waits until it is gone (its
// controller's finalizers released).
func (w *world) deleteAndWait(apiVersion, kind, name string) {
	w.t.Helper()
	o := w.get(apiVersion, kind, name)
	w.g.Expect(w.tgt.Client.Delete(w.ctx, o)).To(Succeed())
	w.expectGone(apiVersion, kind, name)
}

// expectGone waits until the object does not exist.
func (w *world) expectGone(apiVersion, kind, name string) {
	w.t.Helper()
	w.g.Eventually(func() bool {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(apiVersion)
		u.SetKind(kind)
		return apierrors.IsNotFound(w.tgt.Client.Get(w.ctx, client.ObjectKey{Namespace: w.ns, Name: name}, u))
	}, managerTimeout, poll).Should(BeTrue(), "%s %s is gone", kind, name)
}

// exists reports whether the object exists.
func (w *world) exists(apiVersion, kind, name string) bool {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	err := w.tgt.Client.Get(w.ctx, client.ObjectKey{Namespace: w.ns, Name: name}, u)
	w.g.Expect(client.IgnoreNotFound(err)).To(Succeed())
	return err == nil
}

// claimFor renders a Metal3DataClaim naming the data template, as CAPM3
// makes one for each Machine.
func claimFor(name, template string) string {
	return `---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: Metal3DataClaim
metadata: {name: ` + name + `, labels: {cluster.x-k8s.io/cluster-name: mgmt}}
spec:
  template: {name: ` + template + `}
`
}

// spareData renders a Metal3DataTemplate that no machine template names.
func spareData(ip string) string {
	return `---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: Metal3DataTemplate
metadata: {name: spare-data}
spec:
  clusterName: mgmt
  metaData:
    strings: [{key: image-server, value: "` + ip + `"}]
`
}

// expectCAPM3Finalizer waits for the real CAPM3 controller to hold the
// data template with its finalizer: without it the test proves nothing.
// CAPM3 does not requeue a Metal3DataTemplate whose Cluster is not in its
// cache yet (it returns without an error), so a template reconciled
// before its Cluster waits for the next event: every few seconds an
// annotation is written to give it one, as any other writer would.
func (w *world) expectCAPM3Finalizer(name string) {
	w.t.Helper()
	start := time.Now()
	w.g.Eventually(func() []string {
		if time.Since(start) > 5*time.Second {
			start = time.Now()
			w.update(m3, "Metal3DataTemplate", name, func(u *unstructured.Unstructured) {
				u.SetAnnotations(merge(u.GetAnnotations(), map[string]string{"example.com/nudge": start.Format(time.RFC3339Nano)}))
			})
		}
		return w.get(m3, "Metal3DataTemplate", name).GetFinalizers()
	}, managerTimeout, poll).Should(ContainElement(plan.Metal3DataTemplateFinalizer))
}

// TestDataTemplateFinalizerPredicted: on a server-side-apply release, auto
// recreates a locked Metal3DataTemplate only when the delete completes at
// once. With no claim, CAPM3 releases its finalizer at once, and the
// recreate completes. With a claim (one per Machine on a live cluster),
// CAPM3 would keep the template Terminating for as long as the machine
// lives: CorrectionBlocked, nothing deleted, the claim named.
func TestDataTemplateFinalizerPredicted(t *testing.T) {
	live := withExtra(metaLive, spareData("10.10.10.17"))
	release := withExtra(metaRelease, spareData("192.168.100.2"))

	t.Run("no claim: recreated", func(t *testing.T) {
		w := newWorld(t, scenario{annotations: enabled, live: live, release: release, applyMethod: "ssa"})
		w.expectCAPM3Finalizer("spare-data")
		uid := w.get(m3, "Metal3DataTemplate", "spare-data").GetUID()
		w.reconcile()
		now := w.get(m3, "Metal3DataTemplate", "spare-data")
		w.g.Expect(now.GetUID()).NotTo(Equal(uid), "deleted, released by CAPM3 at once, and created again")
		w.g.Expect(now.GetDeletionTimestamp()).To(BeNil())
		w.g.Expect(w.condition().Message).To(ContainSubstring("Metal3DataTemplate/spare-data: recreated, rolls machines: no"))
		// The data templates the machine templates name are in use: blocked.
		w.g.Expect(w.condition().Reason).To(Equal(api.CorrectionBlockedReason))
		w.g.Expect(w.condition().Message).To(ContainSubstring("Metal3DataTemplate/mgmt-md0-metadata: correction blocked"))
		w.g.Expect(w.condition().Message).To(ContainSubstring("in use by Metal3MachineTemplate mgmt-md0"))
	})

	t.Run("a claim names it: blocked", func(t *testing.T) {
		w := newWorld(t, scenario{annotations: enabled, live: live, release: release, applyMethod: "ssa"})
		w.createYAML(claimFor("mgmt-md0-0", "spare-data"))
		w.expectCAPM3Finalizer("spare-data")
		uid := w.get(m3, "Metal3DataTemplate", "spare-data").GetUID()
		w.g.Expect(w.reconcile()).To(Equal(0))
		now := w.get(m3, "Metal3DataTemplate", "spare-data")
		w.g.Expect(now.GetUID()).To(Equal(uid))
		w.g.Expect(now.GetDeletionTimestamp()).To(BeNil(), "never left Terminating")
		cond := w.condition()
		w.g.Expect(cond.Reason).To(Equal(api.CorrectionBlockedReason))
		w.g.Expect(cond.Message).To(ContainSubstring("Metal3DataTemplate/spare-data: correction blocked"))
		w.g.Expect(cond.Message).To(ContainSubstring("Metal3DataClaim mgmt-md0-0"))
		w.g.Expect(cond.Message).To(ContainSubstring("finalizer " + plan.Metal3DataTemplateFinalizer + " keeps it until no Metal3DataClaim or Metal3Data names it"))
		before := w.versions()
		w.g.Expect(w.reconcile()).To(Equal(0))
		w.g.Expect(w.versions()).To(Equal(before))
	})
}

// handMadeMD is a MachineDeployment outside the release that clones its
// control-plane-style machines from the release's LockedMachineTemplate.
const handMadeMD = `---
apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineDeployment
metadata: {name: hand-made}
spec:
  clusterName: mgmt
  selector: {matchLabels: {}}
  template:
    spec:
      clusterName: mgmt
      bootstrap:
        configRef: {apiGroup: bootstrap.cluster.x-k8s.io, kind: KubeadmConfigTemplate, name: mgmt-md0}
      infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: LockedMachineTemplate, name: mgmt-cp}
`

// otherReleaseM3MT is another release's Metal3MachineTemplate naming this
// release's Metal3DataTemplate.
const otherReleaseM3MT = `---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: Metal3MachineTemplate
metadata:
  name: other-workers
  annotations: {meta.helm.sh/release-name: other, meta.helm.sh/release-namespace: elsewhere}
spec:
  template:
    spec:
      image: {url: "http://192.168.100.2/images/ubuntu.qcow2", checksum: "http://192.168.100.2/images/ubuntu.qcow2.sha256sum", checksumType: sha256, format: qcow2}
      dataTemplate: {name: mgmt-md0-metadata}
`

// TestForeignConsumersKeepOriginalInUse: a rotation repoints only the
// release's consumers. A consumer outside the release (a hand-made
// MachineDeployment, another release's Metal3MachineTemplate) is never
// written, is named in the condition, and keeps the drifted original in
// use: not superseded, not in sync. Once it is gone, the rotation
// completes.
func TestForeignConsumersKeepOriginalInUse(t *testing.T) {
	t.Run("hand-made MachineDeployment", func(t *testing.T) {
		w := newWorld(t, scenario{annotations: enabled, live: lockedLive, release: lockedRelease, applyMethod: "csa"})
		g := w.g
		w.createYAML(handMadeMD)
		g.Expect(w.reconcile()).To(Equal(9), "the move block, the worker Metal3MachineTemplate in place, the replacement, 5 control planes repointed, no mark, the lift")
		r := replacementOf(w, m3, "LockedMachineTemplate", "mgmt-cp")
		for _, rp := range refPaths {
			g.Expect(str(w.get(rp.apiVersion, rp.kind, rp.name), rp.path...)).To(Equal(r.GetName()))
		}
		hand := w.get(md, "MachineDeployment", "hand-made")
		g.Expect(writtenByAddon(hand)).To(BeFalse())
		g.Expect(str(hand, "spec", "template", "spec", "infrastructureRef", "name")).To(Equal("mgmt-cp"))
		g.Expect(w.get(m3, "LockedMachineTemplate", "mgmt-cp").GetAnnotations()).NotTo(HaveKey(api.SupersededByAnnotation))
		for _, ms := range w.list(md, "MachineSet") {
			g.Expect(writtenByAddon(&ms)).To(BeFalse(), "MachineSets are never edited")
		}
		cond := w.condition()
		g.Expect(cond.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(cond.Reason).To(Equal(api.DriftDetectedReason))
		g.Expect(cond.Message).To(ContainSubstring("LockedMachineTemplate/mgmt-cp: rotated to " + r.GetName() +
			" for the release's consumers, rolls machines: yes; still in use, with its drift, by MachineDeployment " + w.ns + "/hand-made"))

		before := w.versions()
		g.Expect(w.reconcile()).To(Equal(0))
		g.Expect(w.versions()).To(Equal(before), "held: nothing to do, nothing rewritten")

		w.deleteAndWait(md, "MachineDeployment", "hand-made")
		g.Expect(w.reconcile()).To(Equal(1), "the superseded-by mark")
		g.Expect(w.get(m3, "LockedMachineTemplate", "mgmt-cp").GetAnnotations()).To(HaveKeyWithValue(api.SupersededByAnnotation, r.GetName()))
		g.Expect(w.condition().Status).To(Equal(metav1.ConditionTrue))
	})

	t.Run("another release's Metal3MachineTemplate", func(t *testing.T) {
		w := newWorld(t, scenario{annotations: enabled, live: metaLive, release: metaRelease, applyMethod: "csa"})
		g := w.g
		w.createYAML(otherReleaseM3MT)
		w.reconcile()
		other := w.get(m3, "Metal3MachineTemplate", "other-workers")
		g.Expect(writtenByAddon(other)).To(BeFalse())
		g.Expect(str(other, "spec", "template", "spec", "dataTemplate", "name")).To(Equal("mgmt-md0-metadata"))
		g.Expect(w.get(m3, "Metal3DataTemplate", "mgmt-md0-metadata").GetAnnotations()).NotTo(HaveKey(api.SupersededByAnnotation))
		g.Expect(w.get(m3, "Metal3DataTemplate", "mgmt-cp-metadata").GetAnnotations()).To(HaveKey(api.SupersededByAnnotation), "the other data template is not held")
		cond := w.condition()
		g.Expect(cond.Reason).To(Equal(api.DriftDetectedReason))
		g.Expect(cond.Message).To(ContainSubstring("still in use, with its drift, by Metal3MachineTemplate " + w.ns + "/other-workers"))
		g.Expect(w.reconcile()).To(Equal(0))
	})
}

// v2Image is the image server of a later chart version.
const v2Image = "http://192.168.100.3/images/ubuntu.qcow2"

func withImage(v values, url string) values {
	v.ImageURL = url
	return v
}

// rotateThenUpgrade rotates the locked mgmt-cp of a locked world, then
// records release v2, which renders another image: the next pass rotates
// it a second time. It returns the first replacement's name.
func (w *world) rotateThenUpgrade() string {
	w.t.Helper()
	w.reconcile()
	first := expectRotated(w, m3, "LockedMachineTemplate", "mgmt-cp").GetName()
	w.storeAndRecord(2, "deployed", render(withImage(lockedRelease, v2Image)))
	return first
}

// TestChainOfRotationsAndTheWayBack: a second rotation of the same locked
// original moves the consumers left on the first replacement to the
// newest; the first replacement, unused, is then deleted. A rollback to a
// manifest the original matches moves them back to the original, removes
// its superseded-by mark, and the last replacement is deleted in turn.
func TestChainOfRotationsAndTheWayBack(t *testing.T) {
	w := newWorld(t, scenario{annotations: enabled, live: lockedLive, release: lockedRelease, applyMethod: "csa"})
	g := w.g
	first := w.rotateThenUpgrade()
	g.Expect(w.reconcile()).To(Equal(10), "the move block, the worker Metal3MachineTemplate in place, the second replacement, 5 control planes moved from the first, the mark, the lift")
	second := w.get(m3, "LockedMachineTemplate", "mgmt-cp").GetAnnotations()[api.SupersededByAnnotation]
	g.Expect(second).NotTo(BeEmpty())
	g.Expect(second).NotTo(Equal(first))
	g.Expect(str(w.get(m3, "LockedMachineTemplate", second), "spec", "template", "spec", "image")).To(Equal(v2Image))
	for _, rp := range refPaths {
		g.Expect(str(w.get(rp.apiVersion, rp.kind, rp.name), rp.path...)).To(Equal(second), "%s %s", rp.kind, rp.name)
	}
	g.Expect(w.exists(m3, "LockedMachineTemplate", first)).To(BeTrue(), "still in use when the pass read it")
	w.events()

	// The next pass deletes the first replacement, which nothing uses any more.
	g.Expect(w.reconcile()).To(Equal(1), "the delete, and nothing else")
	w.expectGone(m3, "LockedMachineTemplate", first)
	g.Expect(w.events()).To(ContainElement(And(HavePrefix("Normal "+api.TemplatePrunedEvent), ContainSubstring(first))))
	g.Expect(w.condition().Message).To(ContainSubstring("Deleted unused replacements: LockedMachineTemplate " + w.ns + "/" + first))
	g.Expect(w.exists(m3, "LockedMachineTemplate", second)).To(BeTrue())
	g.Expect(w.exists(m3, "LockedMachineTemplate", "mgmt-cp")).To(BeTrue(), "originals are never pruned")

	// Release v3 rolls back to what the original holds: the way back.
	w.storeAndRecord(3, "deployed", render(lockedLive))
	g.Expect(w.reconcile()).To(Equal(9), "the move block, the worker Metal3MachineTemplate in place, 5 control planes moved back, the mark removed, the lift")
	for _, rp := range refPaths {
		g.Expect(str(w.get(rp.apiVersion, rp.kind, rp.name), rp.path...)).To(Equal("mgmt-cp"), "%s %s", rp.kind, rp.name)
	}
	g.Expect(w.get(m3, "LockedMachineTemplate", "mgmt-cp").GetAnnotations()).NotTo(HaveKey(api.SupersededByAnnotation))
	cond := w.condition()
	g.Expect(cond.Reason).To(Equal(api.DriftCorrectedReason))
	g.Expect(cond.Message).To(ContainSubstring("LockedMachineTemplate/mgmt-cp: matches the manifest again, consumers repointed back to it, rolls machines: yes"))

	g.Expect(w.reconcile()).To(Equal(1), "the delete of the second replacement")
	w.expectGone(m3, "LockedMachineTemplate", second)
	g.Expect(w.list(m3, "LockedMachineTemplate")).To(HaveLen(1))
	// The pass after a clean-up reports the clean state (once), then
	// nothing changes.
	g.Expect(w.reconcile()).To(Equal(0))
	g.Expect(w.condition().Status).To(Equal(metav1.ConditionTrue))
	g.Expect(w.condition().Message).NotTo(ContainSubstring("Deleted unused replacements"))
	before := w.versions()
	g.Expect(w.reconcile()).To(Equal(0))
	g.Expect(w.versions()).To(Equal(before))
	w.expectNoDanglingRefs()
}

// machineSetsNaming lists the MachineSets whose infrastructureRef names template.
func machineSetsNaming(g Gomega, w *world, template string) []string {
	var out []string
	for _, ms := range labelled(g, w, "MachineSet", deploymentLabel, "mgmt-md0") {
		if str(&ms, "spec", "template", "spec", "infrastructureRef", "name") == template {
			out = append(out, ms.GetName())
		}
	}
	return out
}

// TestPruneOnlyWhenUnused: a replacement the real MachineDeployment
// controller's MachineSet still clones from is kept after the
// MachineDeployment moved on, and deleted once that MachineSet is gone. A
// replacement data template a claim names is kept, and deleted (CAPM3
// releasing its finalizer) once the claim is gone. With
// templatedrift.io/prune: disabled nothing is deleted.
func TestPruneOnlyWhenUnused(t *testing.T) {
	t.Run("MachineSet", pruneWhenMachineSetGone)

	t.Run("claims", func(t *testing.T) {
		w := newWorld(t, scenario{annotations: enabled, live: metaLive, release: metaRelease, applyMethod: "csa"})
		g := w.g
		w.reconcile()
		first := expectRotated(w, m3, "Metal3DataTemplate", "mgmt-md0-metadata").GetName()
		w.createYAML(claimFor("mgmt-md0-0", first))
		w.storeAndRecord(2, "deployed", render(withMetadataIP(metaRelease, "192.168.100.4")))
		w.reconcile()
		second := w.get(m3, "Metal3DataTemplate", "mgmt-md0-metadata").GetAnnotations()[api.SupersededByAnnotation]
		g.Expect(second).NotTo(Equal(first))
		g.Expect(str(w.get(m3, "Metal3MachineTemplate", "mgmt-md0"), "spec", "template", "spec", "dataTemplate", "name")).To(Equal(second))
		for pass := 0; pass < 2; pass++ {
			w.reconcile()
		}
		g.Expect(w.exists(m3, "Metal3DataTemplate", first)).To(BeTrue(), "kept: a claim names it")
		g.Expect(w.get(m3, "Metal3DataTemplate", first).GetDeletionTimestamp()).To(BeNil(), "never left Terminating")

		w.deleteAndWait(m3, "Metal3DataClaim", "mgmt-md0-0")
		w.reconcile()
		w.expectGone(m3, "Metal3DataTemplate", first)
	})

	t.Run("disabled", func(t *testing.T) {
		w := newWorld(t, scenario{annotations: merge(enabled, map[string]string{api.PruneAnnotation: "disabled"}),
			live: lockedLive, release: lockedRelease, applyMethod: "csa"})
		g := w.g
		w.reconcile()
		first := expectRotated(w, m3, "LockedMachineTemplate", "mgmt-cp").GetName()
		w.storeAndRecord(2, "deployed", render(withImage(lockedRelease, v2Image)))
		for pass := 0; pass < 3; pass++ {
			w.reconcile()
		}
		g.Expect(w.exists(m3, "LockedMachineTemplate", first)).To(BeTrue(), "unused, but clean-up is off")
		g.Expect(w.events()).NotTo(ContainElement(HavePrefix("Normal " + api.TemplatePrunedEvent)))
	})
}

// pruneWhenMachineSetGone: a rotated Metal3MachineTemplate that a
// MachineSet of the real Cluster API manager still clones from is kept
// through a second rotation, and deleted once the MachineSet is gone.
func pruneWhenMachineSetGone(t *testing.T) {
	w := newWorld(t, scenario{annotations: withStrategy(api.StrategyRotate), live: bootstrap, release: mgmt, applyMethod: "csa"})
	g := w.g
	firstMachineSet(w, "mgmt-md0")
	w.reconcile()
	first := expectRotated(w, m3, "Metal3MachineTemplate", "mgmt-md0").GetName()
	g.Eventually(func(g Gomega) []string { return machineSetsNaming(g, w, first) }, managerTimeout, poll).Should(HaveLen(1),
		"the MachineDeployment controller rolls out a MachineSet cloning from the replacement")
	w.storeAndRecord(2, "deployed", render(withImage(mgmt, v2Image)))
	w.reconcile()
	second := w.get(m3, "Metal3MachineTemplate", "mgmt-md0").GetAnnotations()[api.SupersededByAnnotation]
	g.Expect(second).NotTo(Equal(first))
	g.Expect(str(w.get(md, "MachineDeployment", "mgmt-md0"), "spec", "template", "spec", "infrastructureRef", "name")).To(Equal(second))
	g.Eventually(func(g Gomega) []string { return machineSetsNaming(g, w, second) }, managerTimeout, poll).Should(HaveLen(1))
	for pass := 0; pass < 2; pass++ {
		w.reconcile()
	}
	held := machineSetsNaming(w.g, w, first)
	g.Expect(held).To(HaveLen(1), "the old MachineSet is still there (its machines never get ready here)")
	g.Expect(w.exists(m3, "Metal3MachineTemplate", first)).To(BeTrue(), "kept: MachineSet %s clones from it", held[0])

	w.deleteAndWait(md, "MachineSet", held[0])
	w.events()
	w.reconcile()
	w.expectGone(m3, "Metal3MachineTemplate", first)
	g.Expect(w.events()).To(ContainElement(HavePrefix("Normal " + api.TemplatePrunedEvent)))
	g.Expect(w.exists(m3, "Metal3MachineTemplate", second)).To(BeTrue())
}

func withMetadataIP(v values, ip string) values {
	v.MetadataIP = ip
	return v
}

// TestPruneRaceIsSafe: the replacement changes between the pass's checks
// and its delete (as a person or controller writing it would). The delete
// carries the UID and resourceVersion the pass read, so the server refuses
// it; nothing is lost, and the next pass, which reads the world again,
// decides again.
func TestPruneRaceIsSafe(t *testing.T) {
	w := newWorld(t, scenario{annotations: enabled, live: lockedLive, release: lockedRelease, applyMethod: "csa"})
	g := w.g
	first := w.rotateThenUpgrade()
	w.reconcile()

	raced := false
	w.beforeDelete = func(o client.Object) {
		if raced || o.GetName() != first {
			return
		}
		raced = true
		w.update(m3, "LockedMachineTemplate", first, func(u *unstructured.Unstructured) {
			u.SetLabels(merge(u.GetLabels(), map[string]string{"example.com/touched": "yes"}))
		})
	}
	w.deleteErrs = nil
	w.reconcile()
	g.Expect(raced).To(BeTrue())
	g.Expect(w.deleteErrs).NotTo(BeEmpty())
	g.Expect(apierrors.IsConflict(w.deleteErrs[0])).To(BeTrue(), "the precondition refused the stale delete: %v", w.deleteErrs[0])
	// reconcile reran the pass that lost the race, from a fresh read: the
	// touched replacement, still unused, is deleted then.
	w.expectGone(m3, "LockedMachineTemplate", first)
	g.Expect(strings.Join(w.events(), "\n")).To(ContainSubstring(api.TemplatePrunedEvent))
}
