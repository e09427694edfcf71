package controllers_test

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/templatedrift/template-drift-controller/api"
)

func withStrategy(s string) map[string]string {
	return merge(enabled, map[string]string{api.StrategyAnnotation: s})
}

// TestExplicitInPlaceOnLockedFails: in-place asked for a locked template is
// refused by the server's dry-run, reported with its message, and nothing
// is written.
func TestExplicitInPlaceOnLockedFails(t *testing.T) {
	w := newWorld(t, scenario{annotations: withStrategy(api.StrategyInPlace), live: metaLive, release: metaRelease, applyMethod: "csa"})
	before := w.versions()
	w.g.Expect(w.reconcile()).To(Equal(0))
	cond := w.condition()
	w.g.Expect(cond.Status).To(Equal(metav1.ConditionFalse))
	w.g.Expect(cond.Reason).To(Equal(api.CorrectionFailedReason))
	w.g.Expect(cond.Message).To(ContainSubstring("cannot be modified"))
	delete(before, "HelmRelease/cluster")
	after := w.versions()
	delete(after, "HelmRelease/cluster")
	w.g.Expect(after).To(Equal(before))
	w.g.Expect(w.events()).To(ContainElement(HavePrefix("Warning " + api.TemplateDriftCorrectionFailedEvent)))
}

// TestExplicitRotateOnMutable: rotate is honoured even where in-place would
// be accepted, and repointing the MachineDeployment rolls machines. The
// release is client-side apply: under server-side apply, rotate is refused
// (TestRotateUndoneByHelmRefused).
func TestExplicitRotateOnMutable(t *testing.T) {
	w := newWorld(t, scenario{annotations: withStrategy(api.StrategyRotate), live: bootstrap, release: mgmt, applyMethod: "csa"})
	g := w.g
	w.reconcile()
	r := expectRotated(w, m3, "Metal3MachineTemplate", "mgmt-md0")
	g.Expect(str(r, "spec", "template", "spec", "image", "url")).To(Equal(mgmt.ImageURL))
	g.Expect(str(w.get(md, "MachineDeployment", "mgmt-md0"), "spec", "template", "spec", "infrastructureRef", "name")).To(Equal(r.GetName()))
	// The control plane's reference is checked against the object that
	// really replaces mgmt-cp (found by listing), not against our own mark.
	cp := replacementOf(w, m3, "Metal3MachineTemplate", "mgmt-cp")
	g.Expect(str(cp, "spec", "template", "spec", "image", "url")).To(Equal(mgmt.ImageURL))
	g.Expect(cp.GetName()).To(MatchRegexp("^mgmt-cp-[0-9a-f]{10}$"))
	g.Expect(str(w.get("controlplane.cluster.x-k8s.io/v1beta2", "KubeadmControlPlane", "mgmt-cp"), "spec", "machineTemplate", "spec", "infrastructureRef", "name")).To(Equal(cp.GetName()))
	g.Expect(w.condition().Message).To(ContainSubstring("rotated to " + r.GetName() + ", rolls machines: yes"))
	g.Expect(w.reconcile()).To(Equal(0))
}

// TestExplicitRecreateOnMutable: recreate replaces a template nothing uses
// under the same name; the templates a MachineDeployment, its MachineSets
// or a control plane use are refused (CorrectionBlocked) and kept.
func TestExplicitRecreateOnMutable(t *testing.T) {
	w := newWorld(t, scenario{annotations: withStrategy(api.StrategyRecreate), live: spareLive, release: spareRelease, applyMethod: "csa"})
	g := w.g
	oldUID := w.get(m3, "Metal3MachineTemplate", "spare-m3mt").GetUID()
	usedUID := w.get(m3, "Metal3MachineTemplate", "mgmt-md0").GetUID()
	g.Expect(w.reconcile()).To(Equal(6), "the move block, delete + create of both spare templates, the lift")
	now := w.get(m3, "Metal3MachineTemplate", "spare-m3mt")
	g.Expect(now.GetUID()).NotTo(Equal(oldUID))
	g.Expect(str(now, "spec", "template", "spec", "image", "url")).To(Equal(mgmt.ImageURL))
	used := w.get(m3, "Metal3MachineTemplate", "mgmt-md0")
	g.Expect(used.GetUID()).To(Equal(usedUID), "a template in use is not deleted")
	g.Expect(used.GetDeletionTimestamp()).To(BeNil())
	g.Expect(str(used, "spec", "template", "spec", "image", "url")).To(Equal(bootstrap.ImageURL))
	cond := w.condition()
	g.Expect(cond.Reason).To(Equal(api.CorrectionBlockedReason))
	g.Expect(cond.Message).To(ContainSubstring("Metal3MachineTemplate/mgmt-md0: correction blocked: strategy recreate would delete the template, and the delete cannot complete: it is in use by MachineDeployment mgmt-md0"))
	g.Expect(cond.Message).To(ContainSubstring("set templatedrift.io/strategy to auto"))
	g.Expect(w.list(m3, "Metal3MachineTemplate")).To(HaveLen(3))
	g.Expect(w.reconcile()).To(Equal(0))
}

// TestRecreateRefusedKeepsTemplate: a recreate whose manifest object the
// server would refuse is found out by a dry-run before the delete, so the
// live template is never lost.
func TestRecreateRefusedKeepsTemplate(t *testing.T) {
	w := newWorld(t, scenario{annotations: withStrategy(api.StrategyRecreate), live: spareLive, release: spareRelease})
	// The stored manifest names a checksum-less image, which the CRD refuses.
	broken := strings.ReplaceAll(render(spareRelease), `checksum: "http://192.168.100.2/images/ubuntu.qcow2.sha256sum", `, "")
	w.storeAndRecord(2, "deployed", broken)
	uid := w.get(m3, "Metal3MachineTemplate", "spare-m3mt").GetUID()
	w.reconcile() // the spare LockedMachineTemplate, which the server accepts, is recreated
	w.g.Expect(w.get(m3, "Metal3MachineTemplate", "spare-m3mt").GetUID()).To(Equal(uid), "nothing deleted")
	cond := w.condition()
	w.g.Expect(cond.Reason).To(Equal(api.CorrectionFailedReason))
	w.g.Expect(cond.Message).To(ContainSubstring("the server refuses the manifest's object"))
}
