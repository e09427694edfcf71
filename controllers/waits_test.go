package controllers_test

import (
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/api"
)

// clusterDoc renders one more Cluster for the release manifest, in
// namespace ns ("" for the release's own).
func clusterDoc(ns, name string) string {
	doc := "---\napiVersion: cluster.x-k8s.io/v1beta2\nkind: Cluster\nmetadata:\n  name: " + name + "\n"
	if ns != "" {
		doc += "  namespace: " + ns + "\n"
	}
	// Cluster API's webhook wants a control plane, infrastructure or topology.
	return doc + "spec:\n  controlPlaneRef: {apiGroup: controlplane.cluster.x-k8s.io, kind: KubeadmControlPlane, name: " + name + "}\n"
}

// expectNothingWrittenByAddon checks that the add-on's field manager wrote
// none of the templates and consumers that exist.
func (w *world) expectNothingWrittenByAddon() {
	w.t.Helper()
	for _, k := range append(append([][2]string{}, templateKinds...), consumerKinds...) {
		for _, o := range w.list(k[0], k[1]) {
			w.g.Expect(writtenByAddon(&o)).To(BeFalse(), "%s %s", o.GetKind(), o.GetName())
		}
	}
}

// TestClusterUnavailable: while a Cluster the release renders does not
// exist live, or is being deleted (the source cluster after `clusterctl
// move`, or a Cluster torn down), nothing is written and no template is
// created; the pass waits with ClusterUnavailable.
//
// Before this change, the code reads only the Clusters that exist, so neither case stops
// the pass. With the drifted Metal3MachineTemplates it corrects both in
// place (2 writes); once the garbage collector has removed the templates
// of the deleted Cluster, it creates every one of them again from the
// manifest, owned by no Cluster.
func TestClusterUnavailable(t *testing.T) {
	t.Run("the release renders a Cluster that does not exist", func(t *testing.T) {
		renders := mgmt
		renders.Extra = clusterDoc("", "gone")
		w := newWorld(t, scenario{annotations: enabled, live: bootstrap, release: renders, applyMethod: "csa"})
		expectUntouched(w)
		w.expectImages(bootstrap.ImageURL)
		w.expectWaiting(api.ClusterUnavailableReason, "waiting: Cluster "+w.ns+"/gone does not exist", "Warning")
	})
	t.Run("the Cluster is deleted", func(t *testing.T) {
		w := newWorld(t, scenario{annotations: enabled, live: bootstrap, release: mgmt, applyMethod: "csa"})
		g := w.g
		g.Expect(env.Client.Delete(w.ctx, w.get(md, "Cluster", "mgmt"), client.PropagationPolicy(metav1.DeletePropagationBackground))).To(Succeed())
		// Cluster API's finalizer keeps the Cluster while its controller
		// deletes what it owns, then the garbage collector takes the
		// templates: whichever state the pass meets, it must wait.
		g.Expect(w.reconcile()).To(Equal(0))
		w.expectNothingWrittenByAddon()
		cond := w.condition()
		g.Expect(cond.Status).To(Equal(metav1.ConditionUnknown))
		g.Expect(cond.Reason).To(Equal(api.ClusterUnavailableReason))
		g.Expect(cond.Message).To(MatchRegexp("^waiting: Cluster " + w.ns + "/mgmt (does not exist|is being deleted)$"))
	})
}

// TestCreatedTemplateOwnedByItsNamespaceCluster: a template created from
// the manifest is owned by the release's Clusters in its own namespace
// only. The release also renders a Cluster in another namespace, which
// exists there: an ownerReference to it would name nothing in the
// template's namespace.
//
// Before this change, the code gives the created template an ownerReference to every live
// Cluster of the release, the other namespace's included.
func TestCreatedTemplateOwnedByItsNamespaceCluster(t *testing.T) {
	other := namespaceFor(t.Name() + "-other")
	renders := mgmt
	renders.Extra = clusterDoc(other, "elsewhere")
	w := newWorld(t, scenario{annotations: enabled, live: mgmt, release: renders, applyMethod: "csa"})
	g := w.g
	g.Expect(env.Client.Create(w.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: other}})).To(Succeed())
	elsewhere := &unstructured.Unstructured{}
	elsewhere.SetAPIVersion(md)
	elsewhere.SetKind("Cluster")
	elsewhere.SetNamespace(other)
	elsewhere.SetName("elsewhere")
	elsewhere.Object["spec"] = map[string]any{"controlPlaneRef": map[string]any{
		"apiGroup": "controlplane.cluster.x-k8s.io", "kind": "KubeadmControlPlane", "name": "elsewhere"}}
	g.Expect(env.Client.Create(w.ctx, elsewhere)).To(Succeed())
	g.Expect(env.Client.Delete(w.ctx, w.get(m3, "Metal3MachineTemplate", "mgmt-md0"))).To(Succeed())

	g.Expect(w.reconcile()).To(Equal(1), "the missing template is created")
	created := w.get(m3, "Metal3MachineTemplate", "mgmt-md0")
	g.Expect(writtenByAddon(created)).To(BeTrue())
	cluster := w.get(md, "Cluster", "mgmt")
	g.Expect(created.GetOwnerReferences()).To(ConsistOf(HaveField("UID", cluster.GetUID())))
	g.Expect(w.reconcile()).To(Equal(0))
}

// TestRotateUndoneByHelmRefused: an explicit rotate where Helm sets every
// repointed reference back (server-side apply, from the stored release or
// spec.upgrade.serverSideApply, or helm-controller drift detection
// enabled) is refused as InvalidConfiguration and nothing is written. The
// way out the message names works: a client-side-apply upgrade rotates.
//
// Before this change, the code honours rotate in all three: it creates the two
// replacements, repoints the MachineDeployment and the KubeadmControlPlane
// and marks the originals (6 writes), which the next upgrade or drift
// correction sets back, and each flip rolls machines.
func TestRotateUndoneByHelmRefused(t *testing.T) {
	cases := []struct {
		name        string                    // what makes Helm reassert references
		applyMethod string                    // stored release's apply method
		hrMutate    func(*helmv2.HelmRelease) // HelmRelease settings
		message     string                    // expected message fragment
	}{
		{name: "ssa release", applyMethod: "ssa", message: "spec.upgrade.serverSideApply: disabled"},
		{name: "csa release, ssa upgrades", applyMethod: "csa", message: "server-side apply", hrMutate: func(hr *helmv2.HelmRelease) {
			hr.Spec.Upgrade = &helmv2.Upgrade{ServerSideApply: helmv2.ServerSideApplyEnabled}
		}},
		{name: "drift detection enabled", applyMethod: "csa", message: "set spec.driftDetection.mode to warn", hrMutate: func(hr *helmv2.HelmRelease) {
			hr.Spec.DriftDetection = &helmv2.DriftDetection{Mode: helmv2.DriftDetectionEnabled}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, scenario{annotations: withStrategy(api.StrategyRotate), live: bootstrap, release: mgmt,
				applyMethod: tc.applyMethod, hrMutate: tc.hrMutate})
			g := w.g
			expectUntouched(w)
			cond := w.condition()
			g.Expect(cond.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(cond.Reason).To(Equal(api.InvalidConfigurationReason))
			g.Expect(cond.Message).To(ContainSubstring(`templatedrift.io/strategy="rotate"`))
			g.Expect(cond.Message).To(ContainSubstring("sets every repointed reference back"))
			g.Expect(cond.Message).To(ContainSubstring("use strategy auto (which recreates a locked template nothing uses, and reports CorrectionBlocked for one in use)"))
			g.Expect(cond.Message).To(ContainSubstring(tc.message))
			g.Expect(w.events()).To(ConsistOf(HavePrefix("Warning " + api.TemplateInvalidConfigurationEvent)))
			g.Expect(w.list(m3, "Metal3MachineTemplate")).To(HaveLen(2), "no replacement")
		})
	}
	t.Run("the way out: client-side apply upgrades", func(t *testing.T) {
		w := newWorld(t, scenario{annotations: withStrategy(api.StrategyRotate), live: bootstrap, release: mgmt, applyMethod: "ssa"})
		expectUntouched(w)
		hr := w.freshHR()
		hr.Spec.Upgrade = &helmv2.Upgrade{ServerSideApply: helmv2.ServerSideApplyDisabled}
		w.g.Expect(env.Client.Update(w.ctx, hr)).To(Succeed())
		w.g.Expect(w.reconcile()).To(Equal(8), "the move block, 2 replacements, 2 repoints, 2 marks, the lift")
		expectRotated(w, m3, "Metal3MachineTemplate", "mgmt-md0")
		cond := w.condition()
		w.g.Expect(cond.Reason).To(Equal(api.DriftCorrectedReason), cond.Message)
		w.g.Expect(w.reconcile()).To(Equal(0), "then in sync")
	})
}

// paused returns a liveMutate that puts the cluster.x-k8s.io/paused
// annotation on the live object kind/name.
func paused(kind, name string) func(*unstructured.Unstructured) {
	return func(o *unstructured.Unstructured) {
		if o.GetKind() == kind && o.GetName() == name {
			o.SetAnnotations(merge(o.GetAnnotations(), map[string]string{api.ClusterPausedAnnotation: ""}))
		}
	}
}

// TestPausedObjects: the cluster.x-k8s.io/paused annotation on a template
// or a consumer of the release, not only on its Cluster, makes the pass
// wait with ClusterPaused, naming the object, and write nothing.
//
// Before this change, the code reads the annotation on Clusters only. On the drifted
// Metal3MachineTemplate it corrects both templates in place (2 writes, one
// to the paused template); with the paused KubeadmControlPlane it rotates
// the locked control-plane template and repoints every control plane, the
// paused one included (8 writes).
func TestPausedObjects(t *testing.T) {
	t.Run("a drifted template", func(t *testing.T) {
		w := newWorld(t, scenario{annotations: enabled, live: bootstrap, release: mgmt, applyMethod: "csa",
			liveMutate: paused("Metal3MachineTemplate", "mgmt-md0")})
		expectUntouched(w)
		w.expectImages(bootstrap.ImageURL)
		w.expectWaiting(api.ClusterPausedReason, "waiting: Metal3MachineTemplate "+w.ns+"/mgmt-md0 is paused", "Normal")

		// Resumed: the pass corrects as usual.
		w.update(m3, "Metal3MachineTemplate", "mgmt-md0", func(o *unstructured.Unstructured) {
			ann := o.GetAnnotations()
			delete(ann, api.ClusterPausedAnnotation)
			o.SetAnnotations(ann)
		})
		w.g.Expect(w.reconcile()).To(Equal(2))
		w.expectImages(mgmt.ImageURL)
		w.g.Expect(w.reconcile()).To(Equal(0), "then in sync")
	})
	t.Run("a consumer of a template that would rotate", func(t *testing.T) {
		w := newWorld(t, scenario{annotations: enabled, live: lockedLive, release: lockedRelease, applyMethod: "csa",
			liveMutate: paused("KubeadmControlPlane", "mgmt-cp")})
		expectUntouched(w)
		w.g.Expect(w.list(m3, "LockedMachineTemplate")).To(HaveLen(1), "no replacement")
		w.expectWaiting(api.ClusterPausedReason, "waiting: KubeadmControlPlane "+w.ns+"/mgmt-cp is paused", "Normal")
	})
}
