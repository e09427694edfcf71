package controllers_test

import (
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/templatedrift/template-drift-controller/api"
)

const (
	m3 = "infrastructure.cluster.x-k8s.io/v1beta1"
	md = "cluster.x-k8s.io/v1beta2"
	cp = "controlplane.cluster.x-k8s.io/v1beta2"
)

// enabled opts a release in with rollouts allowed: the tests of how each
// correction is made. optedIn leaves the rollout policy to the
// controller's default, deny, for the tests of consent (consent_test.go).
var (
	enabled = map[string]string{api.ModeAnnotation: api.ModeEnabled, api.RolloutsAnnotation: api.RolloutsAllow}
	optedIn = map[string]string{api.ModeAnnotation: api.ModeEnabled}
)

// TestPivotedTemplatesCorrectedInPlace is the pivot: the live Metal3MachineTemplates still name the
// bootstrap image server, the release manifest names the management one.
// They are patched in place, no consumer is touched, and a second pass
// writes nothing.
func TestPivotedTemplatesCorrectedInPlace(t *testing.T) {
	w := newWorld(t, scenario{annotations: enabled, live: bootstrap, release: mgmt, applyMethod: "csa"})
	g := w.g
	uidBefore := w.get(m3, "Metal3MachineTemplate", "mgmt-md0").GetUID()

	g.Expect(w.reconcile()).To(Equal(2), "one in-place patch per Metal3MachineTemplate")

	for _, name := range []string{"mgmt-md0", "mgmt-cp"} {
		m3mt := w.get(m3, "Metal3MachineTemplate", name)
		g.Expect(str(m3mt, "spec", "template", "spec", "image", "url")).To(Equal(mgmt.ImageURL))
	}
	g.Expect(w.get(m3, "Metal3MachineTemplate", "mgmt-md0").GetUID()).To(Equal(uidBefore), "in place, not recreated")
	g.Expect(writtenByAddon(w.get(md, "MachineDeployment", "mgmt-md0"))).To(BeFalse(), "no consumer is touched")
	g.Expect(writtenByAddon(w.get(cp, "KubeadmControlPlane", "mgmt-cp"))).To(BeFalse(), "no consumer is touched")

	cond := w.condition()
	g.Expect(cond).NotTo(BeNil())
	g.Expect(cond.Status).To(Equal(metav1.ConditionTrue))
	g.Expect(cond.Reason).To(Equal(api.DriftCorrectedReason))
	g.Expect(cond.Message).To(ContainSubstring("Metal3MachineTemplate/mgmt-md0: corrected in place, rolls machines: no"))
	g.Expect(cond.ObservedGeneration).To(Equal(w.hr.Generation))
	evs := w.events()
	g.Expect(evs).To(ConsistOf(HavePrefix("Normal " + api.TemplateDriftCorrectedEvent)))
	g.Expect(evs[0]).To(ContainSubstring("10.10.10.17"), "the event of the correcting pass names the old value")
	g.Expect(w.get(m3, "Metal3MachineTemplate", "mgmt-md0").GetAnnotations()).To(And(
		HaveKeyWithValue(api.SourceReleaseAnnotation, w.ns+"/cluster.v1"),
		HaveKeyWithValue(api.CorrectionAnnotation, "in-place")), "the correction is recorded on the template itself")

	before := w.versions()
	g.Expect(w.reconcile()).To(Equal(0), "a second pass writes nothing")
	g.Expect(w.versions()).To(Equal(before), "not even the HelmRelease status")
	g.Expect(w.events()).To(BeEmpty(), "no repeat event for an unchanged state")
	g.Expect(w.condition().Reason).To(Equal(api.DriftCorrectedReason))
}
