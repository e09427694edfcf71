package controllers_test

import (
	"slices"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/api"
)

// The "rolls machines" part of the condition is a promise about what the
// real Cluster API controllers will do next. These tests hold the add-on to
// it: they watch the MachineSets the real MachineDeployment controller
// creates and the Machines the real KubeadmControlPlane controller creates,
// before and after a correction.

const (
	// deploymentLabel is set by the MachineDeployment controller on its MachineSets.
	deploymentLabel = "cluster.x-k8s.io/deployment-name"
	// controlPlaneLabel is set by the KubeadmControlPlane controller on its Machines.
	controlPlaneLabel = "cluster.x-k8s.io/control-plane-name"
)

// Timeouts: the real managers share 2 cores with the API server and the
// tests; they create a MachineSet in about 2 s and a control-plane Machine
// in about 6 s. settle is how long "nothing rolls" must hold.
const (
	managerTimeout = time.Minute
	settle         = 5 * time.Second
	poll           = 250 * time.Millisecond
)

// labelled lists the cluster.x-k8s.io/v1beta2 objects of kind in w's
// namespace labelled key=value. It takes the Gomega of the poll it runs in,
// so that a failed List is retried there rather than failing the test.
func labelled(g Gomega, w *world, kind, key, value string) []unstructured.Unstructured {
	l := &unstructured.UnstructuredList{}
	l.SetAPIVersion(md)
	l.SetKind(kind + "List")
	g.Expect(w.tgt.Client.List(w.ctx, l, client.InNamespace(w.ns), client.MatchingLabels{key: value})).To(Succeed())
	return l.Items
}

// ids are the sorted "name uid" of objs: a MachineSet or Machine replaced
// under the same name still counts as a change.
func ids(objs []unstructured.Unstructured) []string {
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		out = append(out, o.GetName()+" "+string(o.GetUID()))
	}
	slices.Sort(out)
	return out
}

// machineSetsOf polls the MachineSets of MachineDeployment name.
func machineSetsOf(w *world, name string) func(Gomega) []string {
	return func(g Gomega) []string { return ids(labelled(g, w, "MachineSet", deploymentLabel, name)) }
}

// firstMachineSet waits for the real MachineDeployment controller to create
// the first MachineSet of name: a correction made before it would prove
// nothing about rollouts.
func firstMachineSet(w *world, name string) []string {
	w.t.Helper()
	w.g.Eventually(machineSetsOf(w, name), managerTimeout, poll).Should(HaveLen(1), "the MachineDeployment controller creates %s's first MachineSet", name)
	return machineSetsOf(w, name)(w.g)
}

// expectQuietSecondPass: the pass after a correction writes nothing, not
// even the HelmRelease status.
func expectQuietSecondPass(w *world) {
	w.t.Helper()
	before := w.versions()
	w.g.Expect(w.reconcile()).To(Equal(0), "a second pass writes nothing")
	w.g.Expect(w.versions()).To(Equal(before))
}

// TestRolloutInPlaceCorrectionRollsNoMachines proves "corrected in place,
// rolls machines: no" true against the real controllers: patching the
// Metal3MachineTemplates of a MachineDeployment and of a
// KubeadmControlPlane creates no MachineSet and replaces no control-plane
// Machine. The Cluster gets a Metal3Cluster on a loopback endpoint, without
// which the KubeadmControlPlane controller creates no Machine at all.
func TestRolloutInPlaceCorrectionRollsNoMachines(t *testing.T) {
	live, release := bootstrap, mgmt
	live.Metal3Cluster, release.Metal3Cluster = true, true
	w := newWorld(t, scenario{annotations: enabled, live: live, release: release, applyMethod: "csa"})
	g := w.g
	sets := firstMachineSet(w, "mgmt-md0")
	cpMachines := func(g Gomega) []string { return ids(labelled(g, w, "Machine", controlPlaneLabel, "mgmt-cp")) }
	g.Eventually(cpMachines, managerTimeout, poll).Should(HaveLen(1), "the KubeadmControlPlane controller creates its first (init) Machine")
	machines := cpMachines(g)
	// The KubeadmControlPlane controller replaces no Machine before the
	// control plane is initialized, which it never is here: a repointed
	// machine template only shows as upToDateReplicas 0 (and RollingOut).
	// So that is the rollout signal to hold steady, with the Machines.
	upToDate := func(g Gomega) int64 {
		n, _, err := unstructured.NestedInt64(w.get(cp, "KubeadmControlPlane", "mgmt-cp").Object, "status", "upToDateReplicas")
		g.Expect(err).NotTo(HaveOccurred())
		return n
	}
	g.Eventually(upToDate, managerTimeout, poll).Should(BeEquivalentTo(1))

	g.Expect(w.reconcile()).To(Equal(2), "one in-place patch per Metal3MachineTemplate")

	g.Consistently(func(g Gomega) {
		g.Expect(machineSetsOf(w, "mgmt-md0")(g)).To(Equal(sets), "no new MachineSet")
		g.Expect(cpMachines(g)).To(Equal(machines), "no control-plane Machine replaced")
		g.Expect(upToDate(g)).To(BeEquivalentTo(1), "the control-plane Machine is still up to date")
	}, settle, poll).Should(Succeed())
	kcp := w.get(cp, "KubeadmControlPlane", "mgmt-cp")
	g.Expect(str(kcp, "spec", "machineTemplate", "spec", "infrastructureRef", "name")).To(Equal("mgmt-cp"))
	g.Expect(writtenByAddon(kcp)).To(BeFalse())
	cond := w.condition()
	g.Expect(cond.Message).To(ContainSubstring("Metal3MachineTemplate/mgmt-md0: corrected in place, rolls machines: no"))
	g.Expect(cond.Message).To(ContainSubstring("Metal3MachineTemplate/mgmt-cp: corrected in place, rolls machines: no"))
	g.Expect(cond.Message).NotTo(ContainSubstring("rolls machines: yes"))
	expectQuietSecondPass(w)
}

// TestRolloutRepointedDataTemplateRollsNoMachines proves "rolls machines:
// no" for a rotated Metal3DataTemplate: only the Metal3MachineTemplate's
// dataTemplate reference changes, in place, and the MachineDeployment,
// which names the Metal3MachineTemplate and not the data template, keeps
// its MachineSet.
func TestRolloutRepointedDataTemplateRollsNoMachines(t *testing.T) {
	w := newWorld(t, scenario{annotations: enabled, live: metaLive, release: metaRelease, applyMethod: "csa"})
	g := w.g
	sets := firstMachineSet(w, "mgmt-md0")

	g.Expect(w.reconcile()).To(Equal(8), "the move block, 2 replacements, 2 m3mt patches, 2 superseded marks, the lift")

	g.Expect(str(w.get(m3, "Metal3MachineTemplate", "mgmt-md0"), "spec", "template", "spec", "dataTemplate", "name")).
		To(MatchRegexp("^mgmt-md0-metadata-[0-9a-f]{10}$"), "the test is void unless the reference moved")
	g.Consistently(machineSetsOf(w, "mgmt-md0"), settle, poll).Should(Equal(sets), "no new MachineSet")
	cond := w.condition()
	g.Expect(cond.Message).To(MatchRegexp(`Metal3DataTemplate/mgmt-md0-metadata: rotated to mgmt-md0-metadata-[0-9a-f]{10}, rolls machines: no`))
	g.Expect(cond.Message).NotTo(ContainSubstring("rolls machines: yes"))
	expectQuietSecondPass(w)
}

// TestRolloutLockedMachineTemplateRollsOnce proves "rotated, rolls
// machines: yes" true: repointing a MachineDeployment at the replacement of
// its locked machine template makes the real MachineDeployment controller
// start exactly one rollout, a single new MachineSet cloning from the
// replacement, and the add-on leaves the MachineSets alone.
func TestRolloutLockedMachineTemplateRollsOnce(t *testing.T) {
	live, release := bootstrap, mgmt
	live.Extra, release.Extra = lockedPool(bootstrap.ImageURL, 1), lockedPool(mgmt.ImageURL, 1)
	w := newWorld(t, scenario{annotations: enabled, live: live, release: release, applyMethod: "csa"})
	g := w.g
	first := firstMachineSet(w, "mgmt-md1")

	g.Expect(w.reconcile()).To(Equal(7), "the move block, replacement, MachineDeployment repointed, superseded mark, 2 m3mt patches, the lift")

	r := expectRotated(w, m3, "LockedMachineTemplate", "mgmt-md1")
	g.Eventually(machineSetsOf(w, "mgmt-md1"), managerTimeout, poll).Should(HaveLen(2), "one rollout: one new MachineSet")
	g.Consistently(machineSetsOf(w, "mgmt-md1"), settle, poll).Should(HaveLen(2), "and only one")
	for _, ms := range labelled(g, w, "MachineSet", deploymentLabel, "mgmt-md1") {
		g.Expect(writtenByAddon(&ms)).To(BeFalse(), "MachineSets belong to their MachineDeployment")
		if !slices.Contains(first, ms.GetName()+" "+string(ms.GetUID())) {
			g.Expect(str(&ms, "spec", "template", "spec", "infrastructureRef", "name")).To(Equal(r.GetName()), "the new MachineSet clones from the replacement")
		}
	}
	want := "LockedMachineTemplate/mgmt-md1: rotated to " + r.GetName() + ", rolls machines: yes"
	g.Expect(w.condition().Message).To(ContainSubstring(want))
	g.Expect(w.events()).To(ContainElement(And(HavePrefix("Normal "+api.TemplateDriftCorrectedEvent), ContainSubstring(want))))
	expectQuietSecondPass(w)
}
