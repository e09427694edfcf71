package controllers_test

import (
	"regexp"
	"strconv"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/pipeline"
)

// A correction that rolls Machines waits for consent. These tests hold the
// policy to what the real Cluster API managers do: under deny no
// MachineSet is created, nothing of the correction is written, and the
// condition names what would roll; an approval with the id rolls exactly
// once; a stale one rolls nothing.

// lockedPool is a second worker pool of replicas on the locked fixture kind
// (its spec refused by a CEL rule, as a provider's webhook would), so that
// its drift is corrected only by a rotation that repoints, and rolls, the
// MachineDeployment. It reuses the chart's KubeadmConfigTemplate.
func lockedPool(image string, replicas int) string {
	return `---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: LockedMachineTemplate
metadata: {name: mgmt-md1}
spec:
  template:
    spec: {image: "` + image + `", flavor: small}
---
apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineDeployment
metadata: {name: mgmt-md1}
spec:
  clusterName: mgmt
  replicas: ` + strconv.Itoa(replicas) + `
  selector: {matchLabels: {}}
  template:
    spec:
      clusterName: mgmt
      bootstrap:
        configRef: {apiGroup: bootstrap.cluster.x-k8s.io, kind: KubeadmConfigTemplate, name: mgmt-md0}
      infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: LockedMachineTemplate, name: mgmt-md1}
`
}

// lockedPoolWorld is the pivot with the locked pool drifted beside the
// Metal3 templates, which heal in place.
func lockedPoolWorld(t *testing.T, annotations map[string]string) *world {
	live, release := bootstrap, mgmt
	live.Extra, release.Extra = lockedPool(bootstrap.ImageURL, 2), lockedPool(mgmt.ImageURL, 2)
	return newWorld(t, scenario{annotations: annotations, live: live, release: release, applyMethod: "csa"})
}

// rolloutIDs are the ids of the rollouts a condition says wait.
var rolloutIDs = regexp.MustCompile(`rollout ([0-9a-f]{10})`)

// waitingIDs reads the ids of the rollouts the condition says wait.
func (w *world) waitingIDs() []string {
	w.t.Helper()
	var out []string
	for _, m := range rolloutIDs.FindAllStringSubmatch(w.condition().Message, -1) {
		out = append(out, m[1])
	}
	return out
}

// TestRolloutWaitsForApproval: under deny (the default) the locked pool's
// rotation waits over several passes: no replacement, no repoint, no new
// MachineSet, while the Metal3 templates of the same release are healed in
// place; the condition names the MachineDeployment and its 2 Machines. A
// stale id rolls nothing and is said stale. The id rolls exactly one new
// MachineSet, the condition then says the rollout was made, and the id
// never rolls anything again.
func TestRolloutWaitsForApproval(t *testing.T) {
	w := lockedPoolWorld(t, optedIn)
	g := w.g
	sets := firstMachineSet(w, "mgmt-md1")

	g.Expect(w.reconcile()).To(Equal(2), "the 2 Metal3MachineTemplates in place, nothing for the locked pool")
	cond := w.condition()
	g.Expect(cond.Status).To(Equal(metav1.ConditionFalse))
	g.Expect(cond.Reason).To(Equal(api.RolloutAwaitingApprovalReason))
	g.Expect(cond.Message).To(ContainSubstring("Metal3MachineTemplate/mgmt-md0: corrected in place, rolls machines: no"))
	g.Expect(cond.Message).To(MatchRegexp(`LockedMachineTemplate/mgmt-md1: waits for approval of rollout [0-9a-f]{10}: would rotate to mgmt-md1-[0-9a-f]{10}, ` +
		`replacing the Machines of MachineDeployment ` + w.ns + `/mgmt-md1 \(2 Machines\)`))
	g.Expect(cond.Message).To(ContainSubstring("Approve with: kubectl -n " + w.ns + " annotate helmrelease cluster " + api.ApproveRolloutAnnotation + "="))
	g.Expect(w.events()).To(ContainElement(HavePrefix("Warning " + api.TemplateRolloutAwaitingApprovalEvent)))
	ids := w.waitingIDs()
	g.Expect(ids).To(HaveLen(1))
	for pass := 0; pass < 3; pass++ {
		g.Expect(w.reconcile()).To(Equal(0), "nothing of the rollout is written, pass after pass")
	}
	g.Expect(w.events()).To(BeEmpty(), "the event is said once")
	g.Expect(w.list(m3, "LockedMachineTemplate")).To(HaveLen(1), "no replacement")
	g.Expect(str(w.get(md, "MachineDeployment", "mgmt-md1"), "spec", "template", "spec", "infrastructureRef", "name")).To(Equal("mgmt-md1"))
	g.Consistently(machineSetsOf(w, "mgmt-md1"), settle, poll).Should(Equal(sets), "no new MachineSet")
	g.Expect(w.waitingIDs()).To(Equal(ids), "the same id on every pass")

	w.setAnnotations(merge(optedIn, map[string]string{api.ApproveRolloutAnnotation: "0123456789"}))
	g.Expect(w.reconcile()).To(Equal(0), "a stale approval rolls nothing")
	g.Expect(w.condition().Message).To(ContainSubstring("Stale approvals, which roll nothing"))
	g.Expect(w.waitingIDs()).To(Equal(ids), "and the condition shows the id to approve")

	w.setAnnotations(merge(optedIn, map[string]string{api.ApproveRolloutAnnotation: ids[0]}))
	g.Expect(w.reconcile()).To(Equal(5), "the move block, the replacement, the repoint with its record, the mark, the lift")
	r := expectRotated(w, m3, "LockedMachineTemplate", "mgmt-md1")
	deployment := w.get(md, "MachineDeployment", "mgmt-md1")
	g.Expect(deployment.GetAnnotations()).To(HaveKeyWithValue(api.RolloutsMadeAnnotation, ids[0]))
	g.Eventually(machineSetsOf(w, "mgmt-md1"), managerTimeout, poll).Should(HaveLen(2), "one rollout: one new MachineSet")
	g.Consistently(machineSetsOf(w, "mgmt-md1"), settle, poll).Should(HaveLen(2), "and only one")
	cond = w.condition()
	g.Expect(cond.Status).To(Equal(metav1.ConditionTrue), cond.Message)
	g.Expect(cond.Message).To(ContainSubstring("LockedMachineTemplate/mgmt-md1: rotated to " + r.GetName() + ", rolls machines: yes"))
	g.Expect(cond.Message).To(ContainSubstring("Approved rollouts made: " + ids[0]))
	expectQuietSecondPass(w)
}

// TestRolloutAllowed: under allow the rotation is made at once, as before
// the policy existed, and the MachineDeployment records the rollout.
func TestRolloutAllowed(t *testing.T) {
	w := lockedPoolWorld(t, enabled)
	g := w.g
	firstMachineSet(w, "mgmt-md1")
	g.Expect(w.reconcile()).To(Equal(7), "the move block, 2 m3mt patches, the replacement, the repoint, the mark, the lift")
	expectRotated(w, m3, "LockedMachineTemplate", "mgmt-md1")
	g.Expect(w.get(md, "MachineDeployment", "mgmt-md1").GetAnnotations()).To(HaveKey(api.RolloutsMadeAnnotation))
	g.Eventually(machineSetsOf(w, "mgmt-md1"), managerTimeout, poll).Should(HaveLen(2))
	g.Expect(w.condition().Reason).To(Equal(api.DriftCorrectedReason))
}

// TestControlPlaneRolloutWaitsForApproval: a KubeadmControlPlane whose
// locked machine template drifted the same way: not repointed under deny,
// named in the condition with its Machines, repointed once approved.
func TestControlPlaneRolloutWaitsForApproval(t *testing.T) {
	live := values{ImageURL: bootstrap.ImageURL, MetadataIP: "10.10.10.17", CPKind: "LockedMachineTemplate"}
	release := values{ImageURL: mgmt.ImageURL, MetadataIP: "10.10.10.17", CPKind: "LockedMachineTemplate"}
	w := newWorld(t, scenario{annotations: optedIn, live: live, release: release, applyMethod: "csa"})
	g := w.g
	g.Expect(w.reconcile()).To(Equal(1), "the worker Metal3MachineTemplate in place")
	g.Expect(w.condition().Message).To(MatchRegexp(`LockedMachineTemplate/mgmt-cp: waits for approval of rollout [0-9a-f]{10}: would rotate to mgmt-cp-[0-9a-f]{10}, ` +
		`replacing the Machines of KubeadmControlPlane ` + w.ns + `/mgmt-cp \(\d+ Machines?\)`))
	g.Expect(w.reconcile()).To(Equal(0))
	kcp := w.get(cp, "KubeadmControlPlane", "mgmt-cp")
	g.Expect(str(kcp, "spec", "machineTemplate", "spec", "infrastructureRef", "name")).To(Equal("mgmt-cp"))
	g.Expect(writtenByAddon(kcp)).To(BeFalse())

	w.setAnnotations(merge(optedIn, map[string]string{api.ApproveRolloutAnnotation: w.waitingIDs()[0]}))
	g.Expect(w.reconcile()).To(Equal(5), "the move block, the replacement, the repoint, the mark, the lift")
	r := expectRotated(w, m3, "LockedMachineTemplate", "mgmt-cp")
	g.Expect(str(w.get(cp, "KubeadmControlPlane", "mgmt-cp"), "spec", "machineTemplate", "spec", "infrastructureRef", "name")).To(Equal(r.GetName()))
	g.Expect(w.condition().Status).To(Equal(metav1.ConditionTrue))
	expectQuietSecondPass(w)
}

// TestRolloutBudget: three releases allowed to roll, a budget of 1. The
// first rolls; the others wait with RolloutBudgetExhausted until its
// MachineDeployment reports the rollout done (the real MachineDeployment
// controller; the pools have no replicas, so it ends as soon as the
// controller sees it); then the next rolls.
func TestRolloutBudget(t *testing.T) {
	budget := pipeline.NewRolloutBudget(1)
	budget.Hold = 0 // the test reads the API server, never a lagging cache
	var worlds []*world
	for range 3 {
		live, release := bootstrap, mgmt
		live.Extra, release.Extra = lockedPool(bootstrap.ImageURL, 0), lockedPool(mgmt.ImageURL, 0)
		worlds = append(worlds, newWorld(t, scenario{annotations: enabled, live: live, release: release, applyMethod: "csa", budget: budget}))
	}
	rolled := func(w *world) bool {
		return str(w.get(md, "MachineDeployment", "mgmt-md1"), "spec", "template", "spec", "infrastructureRef", "name") != "mgmt-md1"
	}
	first, second, third := worlds[0], worlds[1], worlds[2]
	first.reconcile()
	g := first.g
	g.Expect(rolled(first)).To(BeTrue())
	for _, w := range []*world{second, third} {
		w.reconcile()
		g.Expect(rolled(w)).To(BeFalse())
		g.Expect(w.condition().Reason).To(Equal(api.RolloutBudgetExhaustedReason))
		g.Expect(w.condition().Message).To(ContainSubstring("waits for the rollout budget"))
	}
	// The first release's MachineDeployment reports its rollout done: its
	// controller observed the repoint, and every (no) Machine is up to date.
	g.Eventually(func(g Gomega) {
		first.reconcile()
		second.reconcile()
		g.Expect(rolled(second)).To(BeTrue())
	}, managerTimeout, poll).Should(Succeed())
	third.reconcile()
	g.Expect(rolled(third)).To(BeFalse(), "the second release's rollout holds the budget now")
	g.Expect(third.condition().Reason).To(Equal(api.RolloutBudgetExhaustedReason))
}
