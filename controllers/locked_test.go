package controllers_test

import (
	"strings"
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"

	"github.com/templatedrift/template-drift-controller/api"
)

// metaDrift: the locked Metal3DataTemplate metaData still carries the
// bootstrap IP; the release manifest has the management one.
var (
	metaLive    = values{ImageURL: mgmt.ImageURL, MetadataIP: "10.10.10.17", CPKind: "Metal3MachineTemplate"}
	metaRelease = values{ImageURL: mgmt.ImageURL, MetadataIP: "192.168.100.2", CPKind: "Metal3MachineTemplate"}
)

// expectRotated checks the replacement of original: named <original>-<10 hex>,
// desired content, lineage annotations, Helm ownership, and the owners of
// the original reattached.
func expectRotated(w *world, apiVersion, kind, original string) *unstructured.Unstructured {
	w.t.Helper()
	orig := w.get(apiVersion, kind, original)
	replacement := orig.GetAnnotations()[api.SupersededByAnnotation]
	w.g.Expect(replacement).To(MatchRegexp("^" + original + "-[0-9a-f]{10}$"))
	r := w.get(apiVersion, kind, replacement)
	w.g.Expect(r.GetAnnotations()).To(HaveKeyWithValue(api.ReplacesAnnotation, original))
	w.g.Expect(r.GetAnnotations()).To(HaveKeyWithValue(api.SourceReleaseAnnotation, w.ns+"/cluster.v1"))
	w.g.Expect(r.GetAnnotations()).To(HaveKeyWithValue(api.HelmReleaseNameAnnotation, "cluster"))
	w.g.Expect(r.GetAnnotations()).NotTo(HaveKey(api.SupersededByAnnotation))
	cluster := w.get(md[:len("cluster.x-k8s.io/v1beta2")], "Cluster", "mgmt")
	w.g.Expect(r.GetOwnerReferences()).To(ConsistOf(HaveField("UID", cluster.GetUID())))
	return r
}

// replacementOf finds, by listing, the one object of kind that says it
// replaces original.
func replacementOf(w *world, apiVersion, kind, original string) *unstructured.Unstructured {
	w.t.Helper()
	var found []unstructured.Unstructured
	for _, o := range w.list(apiVersion, kind) {
		if o.GetAnnotations()[api.ReplacesAnnotation] == original {
			found = append(found, o)
		}
	}
	w.g.Expect(found).To(HaveLen(1), "exactly one replacement of %s", original)
	return &found[0]
}

// TestLockedDataTemplateRotates: a CSA release whose Metal3DataTemplate
// metaData drifted. The m3dt is rotated, the mutable m3mt repointed in place,
// no machine rolls, and a second pass writes nothing.
func TestLockedDataTemplateRotates(t *testing.T) {
	w := newWorld(t, scenario{annotations: enabled, live: metaLive, release: metaRelease, applyMethod: "csa"})
	g := w.g
	m3mtUID := w.get(m3, "Metal3MachineTemplate", "mgmt-md0").GetUID()

	g.Expect(w.reconcile()).To(Equal(8), "the move block, 2 replacements, 2 m3mt patches, 2 superseded marks, the lift")

	for _, name := range []string{"mgmt-md0", "mgmt-cp"} {
		r := expectRotated(w, m3, "Metal3DataTemplate", name+"-metadata")
		g.Expect(r.Object["spec"]).To(HaveKeyWithValue("metaData", HaveKeyWithValue("strings", ContainElement(HaveKeyWithValue("value", "192.168.100.2")))))
		m3mt := w.get(m3, "Metal3MachineTemplate", name)
		g.Expect(str(m3mt, "spec", "template", "spec", "dataTemplate", "name")).To(Equal(r.GetName()))
	}
	g.Expect(w.get(m3, "Metal3MachineTemplate", "mgmt-md0").GetUID()).To(Equal(m3mtUID), "repointed in place")
	g.Expect(writtenByAddon(w.get(md, "MachineDeployment", "mgmt-md0"))).To(BeFalse(), "the MachineDeployment is not touched")
	cond := w.condition()
	g.Expect(cond.Reason).To(Equal(api.DriftCorrectedReason))
	g.Expect(cond.Message).To(ContainSubstring("Metal3DataTemplate/mgmt-md0-metadata: rotated to mgmt-md0-metadata-"))
	g.Expect(cond.Message).To(ContainSubstring("rolls machines: no"))
	g.Expect(cond.Message).NotTo(ContainSubstring("rolls machines: yes"))

	before := w.versions()
	g.Expect(w.reconcile()).To(Equal(0))
	g.Expect(w.versions()).To(Equal(before))
	g.Expect(w.list(m3, "Metal3DataTemplate")).To(HaveLen(4), "no duplicate replacement")
}

// rke2AndV1beta1 adds consumers of the locked control-plane template in
// every served shape: RKE2ControlPlanes at v1alpha1, v1beta1 (both fields)
// and v1beta2, and a v1beta1 KubeadmControlPlane, which Cluster API stores
// as v1beta2 through its conversion webhook.
const rke2AndV1beta1 = `---
apiVersion: controlplane.cluster.x-k8s.io/v1beta1
kind: KubeadmControlPlane
metadata: {name: kcp-v1beta1}
spec:
  version: v1.33.4
  kubeadmConfigSpec: {}
  machineTemplate:
    infrastructureRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: LockedMachineTemplate, name: mgmt-cp}
---
apiVersion: controlplane.cluster.x-k8s.io/v1alpha1
kind: RKE2ControlPlane
metadata: {name: rke2-v1alpha1}
spec:
  infrastructureRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: LockedMachineTemplate, name: mgmt-cp}
---
apiVersion: controlplane.cluster.x-k8s.io/v1beta1
kind: RKE2ControlPlane
metadata: {name: rke2-v1beta1}
spec:
  infrastructureRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: LockedMachineTemplate, name: mgmt-cp}
  machineTemplate:
    infrastructureRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: LockedMachineTemplate, name: mgmt-cp}
---
apiVersion: controlplane.cluster.x-k8s.io/v1beta2
kind: RKE2ControlPlane
metadata: {name: rke2-v1beta2}
spec:
  version: v1.33.4+rke2r1
  machineTemplate:
    spec:
      infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: LockedMachineTemplate, name: mgmt-cp}
`

var (
	lockedLive    = values{ImageURL: bootstrap.ImageURL, MetadataIP: "10.10.10.17", CPKind: "LockedMachineTemplate", Extra: rke2AndV1beta1}
	lockedRelease = values{ImageURL: mgmt.ImageURL, MetadataIP: "10.10.10.17", CPKind: "LockedMachineTemplate", Extra: rke2AndV1beta1}
)

// refPaths are where each consumer of the locked template references it.
var refPaths = []struct {
	apiVersion, kind, name string
	path                   []string
}{
	{cp, "KubeadmControlPlane", "mgmt-cp", []string{"spec", "machineTemplate", "spec", "infrastructureRef", "name"}},
	// Written in v1beta1, read back in both versions through the conversion webhook.
	{"controlplane.cluster.x-k8s.io/v1beta1", "KubeadmControlPlane", "kcp-v1beta1", []string{"spec", "machineTemplate", "infrastructureRef", "name"}},
	{cp, "KubeadmControlPlane", "kcp-v1beta1", []string{"spec", "machineTemplate", "spec", "infrastructureRef", "name"}},
	{"controlplane.cluster.x-k8s.io/v1alpha1", "RKE2ControlPlane", "rke2-v1alpha1", []string{"spec", "infrastructureRef", "name"}},
	{"controlplane.cluster.x-k8s.io/v1beta1", "RKE2ControlPlane", "rke2-v1beta1", []string{"spec", "infrastructureRef", "name"}},
	{"controlplane.cluster.x-k8s.io/v1beta1", "RKE2ControlPlane", "rke2-v1beta1", []string{"spec", "machineTemplate", "infrastructureRef", "name"}},
	{"controlplane.cluster.x-k8s.io/v1beta2", "RKE2ControlPlane", "rke2-v1beta2", []string{"spec", "machineTemplate", "spec", "infrastructureRef", "name"}},
}

// TestLockedMachineTemplateRotatesEveryReference: a locked machine template
// on a CSA release is rotated, and every control plane, in every served API
// version, is repointed; that rolls machines.
func TestLockedMachineTemplateRotatesEveryReference(t *testing.T) {
	w := newWorld(t, scenario{annotations: enabled, live: lockedLive, release: lockedRelease, applyMethod: "csa"})
	g := w.g
	w.reconcile()
	r := expectRotated(w, m3, "LockedMachineTemplate", "mgmt-cp")
	g.Expect(str(r, "spec", "template", "spec", "image")).To(Equal(mgmt.ImageURL))
	g.Expect(str(w.get(m3, "LockedMachineTemplate", "mgmt-cp"), "spec", "template", "spec", "image")).To(Equal(bootstrap.ImageURL), "the locked original is left as it is")
	for _, rp := range refPaths {
		g.Expect(str(w.get(rp.apiVersion, rp.kind, rp.name), rp.path...)).To(Equal(r.GetName()), "%s %s .%s", rp.kind, rp.name, strings.Join(rp.path, "."))
	}
	cond := w.condition()
	g.Expect(cond.Message).To(ContainSubstring("LockedMachineTemplate/mgmt-cp: rotated to " + r.GetName() + ", rolls machines: yes"))
	g.Expect(w.reconcile()).To(Equal(0))
}

// reassertingReleases are the releases on which Helm sets a repointed
// reference back, so auto cannot rotate: a server-side-apply release, a
// client-side-apply one with helm-controller drift detection enabled, and
// a failed server-side-apply upgrade (refused by the locked template).
var reassertingReleases = []struct {
	name        string
	applyMethod string                    // stored release's apply method
	status      string                    // stored release's status
	hrMutate    func(*helmv2.HelmRelease) // HelmRelease settings
}{
	{name: "ssa release", applyMethod: "ssa"},
	{name: "csa release with drift detection enabled", applyMethod: "csa", hrMutate: func(hr *helmv2.HelmRelease) {
		hr.Spec.DriftDetection = &helmv2.DriftDetection{Mode: helmv2.DriftDetectionEnabled}
	}},
	{name: "failed ssa upgrade", applyMethod: "ssa", status: "failed"},
}

// TestAutoPicksRecreate: when Helm would set a repointed reference back,
// auto recreates a locked template that nothing uses under its own name.
// A failed release is healed from that release's manifest.
func TestAutoPicksRecreate(t *testing.T) {
	for _, tc := range reassertingReleases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, scenario{annotations: enabled, live: spareLive, release: spareRelease,
				applyMethod: tc.applyMethod, status: tc.status, hrMutate: tc.hrMutate})
			g := w.g
			oldUID := w.get(m3, "LockedMachineTemplate", "spare-locked").GetUID()
			cluster := w.get("cluster.x-k8s.io/v1beta2", "Cluster", "mgmt")
			g.Expect(w.reconcile()).To(Equal(7), "the move block, 3 Metal3MachineTemplates in place, then delete + create of the locked one, the lift")
			now := w.get(m3, "LockedMachineTemplate", "spare-locked")
			g.Expect(now.GetUID()).NotTo(Equal(oldUID))
			g.Expect(str(now, "spec", "template", "spec", "image")).To(Equal(mgmt.ImageURL))
			g.Expect(now.GetAnnotations()).To(HaveKeyWithValue(api.HelmReleaseNameAnnotation, "cluster"))
			g.Expect(now.GetLabels()).To(HaveKeyWithValue(api.HelmManagedByLabel, "Helm"))
			g.Expect(now.GetOwnerReferences()).To(ConsistOf(HaveField("UID", cluster.GetUID())))
			g.Expect(w.list(m3, "LockedMachineTemplate")).To(HaveLen(1))
			cond := w.condition()
			g.Expect(cond.Status).To(Equal(metav1.ConditionTrue), cond.Message)
			g.Expect(cond.Message).To(ContainSubstring("LockedMachineTemplate/spare-locked: recreated, rolls machines: no"))
			g.Expect(w.reconcile()).To(Equal(0))
		})
	}
}

// TestRecreateBlockedWhileInUse: the same releases with the locked template
// in use by the control planes. A recreate would leave them pointing at
// nothing, and Helm would set a rotation back: CorrectionBlocked, nothing
// written for the template, the message names its users and the ways out,
// and later passes repeat nothing (no write, no event, the same message).
func TestRecreateBlockedWhileInUse(t *testing.T) {
	for _, tc := range reassertingReleases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, scenario{annotations: enabled, live: lockedLive, release: lockedRelease,
				applyMethod: tc.applyMethod, status: tc.status, hrMutate: tc.hrMutate})
			g := w.g
			uid := w.get(m3, "LockedMachineTemplate", "mgmt-cp").GetUID()
			g.Expect(w.reconcile()).To(Equal(1), "only the mutable worker Metal3MachineTemplate, in place")
			locked := w.get(m3, "LockedMachineTemplate", "mgmt-cp")
			g.Expect(locked.GetUID()).To(Equal(uid), "not deleted")
			g.Expect(locked.GetDeletionTimestamp()).To(BeNil())
			g.Expect(writtenByAddon(locked)).To(BeFalse())
			g.Expect(w.list(m3, "LockedMachineTemplate")).To(HaveLen(1), "no replacement")
			for _, rp := range refPaths {
				g.Expect(str(w.get(rp.apiVersion, rp.kind, rp.name), rp.path...)).To(Equal("mgmt-cp"))
			}
			cond := w.condition()
			g.Expect(cond.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(cond.Reason).To(Equal(api.CorrectionBlockedReason))
			g.Expect(cond.Message).To(ContainSubstring("LockedMachineTemplate/mgmt-cp: correction blocked"))
			g.Expect(cond.Message).To(ContainSubstring("in use by 2 KubeadmControlPlanes (kcp-v1beta1, ...), 3 RKE2ControlPlanes"))
			g.Expect(cond.Message).To(ContainSubstring("give the template a new name in the chart"))
			if tc.applyMethod == "ssa" {
				g.Expect(cond.Message).To(ContainSubstring("upgrade with client-side apply (spec.upgrade.serverSideApply: disabled), after which auto rotates"))
			} else {
				g.Expect(cond.Message).To(ContainSubstring("set spec.driftDetection.mode to warn, after which auto rotates"))
			}
			g.Expect(w.events()).To(ContainElement(HavePrefix("Warning " + api.TemplateCorrectionBlockedEvent)))
			before := w.versions()
			for pass := 0; pass < 3; pass++ {
				g.Expect(w.reconcile()).To(Equal(0))
			}
			g.Expect(w.versions()).To(Equal(before), "not even the condition is rewritten")
			g.Expect(w.events()).To(BeEmpty(), "no event repeats")
		})
	}
}

// TestReferenceSetBack: after a rotation, a consumer found pointing at the
// superseded original again (as a Helm upgrade or a person would do) is
// repointed again, with a Warning event that says so.
func TestReferenceSetBack(t *testing.T) {
	w := newWorld(t, scenario{annotations: enabled, live: lockedLive, release: lockedRelease, applyMethod: "csa"})
	g := w.g
	w.reconcile()
	r := expectRotated(w, m3, "LockedMachineTemplate", "mgmt-cp")
	w.events()

	// The real KubeadmControlPlane controller writes the object too.
	g.Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		kcp := w.get(cp, "KubeadmControlPlane", "mgmt-cp")
		g.Expect(unstructured.SetNestedField(kcp.Object, "mgmt-cp", "spec", "machineTemplate", "spec", "infrastructureRef", "name")).To(Succeed())
		return env.Client.Update(w.ctx, kcp)
	})).To(Succeed())

	g.Expect(w.reconcile()).To(Equal(1))
	g.Expect(str(w.get(cp, "KubeadmControlPlane", "mgmt-cp"), "spec", "machineTemplate", "spec", "infrastructureRef", "name")).To(Equal(r.GetName()))
	g.Expect(w.events()).To(ContainElement(And(HavePrefix("Warning "+api.TemplateReferenceRevertedEvent), ContainSubstring("set back"))))
	g.Expect(w.reconcile()).To(Equal(0))
}
