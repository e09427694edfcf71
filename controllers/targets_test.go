package controllers_test

import (
	"os"
	"strings"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/meta"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/testenv"
)

// TestImpersonation: every read and write on the target goes through the
// HelmRelease's spec.serviceAccountName, as helm-controller's do. Without
// RBAC nothing happens and the refusal names the service account; with it
// the templates are corrected.
func TestImpersonation(t *testing.T) {
	w := newWorld(t, scenario{annotations: enabled, live: bootstrap, release: mgmt, applyMethod: "csa",
		hrMutate: func(hr *helmv2.HelmRelease) { hr.Spec.ServiceAccountName = "tdc-limited" }, reads: asProduction})
	g := w.g
	g.Expect(env.Client.Create(w.ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "tdc-limited", Namespace: w.ns}})).To(Succeed())
	before := w.versions()
	w.reconcile()
	cond := w.condition()
	g.Expect(cond.Reason).To(Equal(api.ReleaseUnavailableReason))
	g.Expect(cond.Message).To(ContainSubstring("system:serviceaccount:" + w.ns + ":tdc-limited"))
	g.Expect(cond.Message).To(ContainSubstring("forbidden"))
	delete(before, "HelmRelease/cluster")
	after := w.versions()
	delete(after, "HelmRelease/cluster")
	g.Expect(after).To(Equal(before))

	w.grant("tdc-limited", testenv.TenantRules()...)
	g.Eventually(func() string {
		w.reconcile()
		return reasonOf(w.condition())
	}, 10*time.Second, 500*time.Millisecond).Should(Equal(api.DriftCorrectedReason))
	g.Expect(str(w.get(m3, "Metal3MachineTemplate", "mgmt-md0"), "spec", "template", "spec", "image", "url")).To(Equal(mgmt.ImageURL))
}

// TestRemoteTarget: a HelmRelease with spec.kubeConfig.secretRef deploys to
// another cluster; the release is read there and the templates healed
// there, while the condition lands on the HelmRelease here.
func TestRemoteTarget(t *testing.T) {
	remote, err := testenv.StartWith("remote", testenv.Options{Managers: true})
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = remote.Stop() })
	w := newWorld(t, scenario{annotations: enabled, live: bootstrap, release: mgmt, applyMethod: "csa",
		hrMutate: func(hr *helmv2.HelmRelease) {
			hr.Spec.KubeConfig = &meta.KubeConfigReference{SecretRef: &meta.SecretKeyReference{Name: "remote-kubeconfig"}}
		}, reads: asProduction, cluster: remote})
	g := w.g
	w.reconcile()
	g.Expect(w.condition().Message).To(ContainSubstring("remote-kubeconfig"), "a missing kubeconfig Secret is reported")

	kc, err := os.ReadFile(remote.KubeConfigPath)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(env.Client.Create(w.ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "remote-kubeconfig", Namespace: w.ns},
		Data: map[string][]byte{"value": kc}})).To(Succeed())
	w.reconcile()
	g.Expect(reasonOf(w.condition())).To(Equal(api.DriftCorrectedReason), w.condition().Message)
	g.Expect(str(w.get(m3, "Metal3MachineTemplate", "mgmt-md0"), "spec", "template", "spec", "image", "url")).To(Equal(mgmt.ImageURL))
	local := &unstructured.UnstructuredList{}
	local.SetAPIVersion(m3)
	local.SetKind("Metal3MachineTemplateList")
	g.Expect(env.Client.List(w.ctx, local, client.InNamespace(w.ns))).To(Succeed())
	g.Expect(local.Items).To(BeEmpty(), "nothing was written to the local cluster")
}

// TestKubeConfigWithoutSecretRefRefused: a spec.kubeConfig with a
// configMapRef (workload identity) names a remote cluster the add-on cannot
// reach. It is refused as invalid configuration, naming the field, and
// nothing is read or written on the local cluster in its place (before, the
// pass took the local cluster for the target and corrected its templates).
func TestKubeConfigWithoutSecretRefRefused(t *testing.T) {
	w := newWorld(t, scenario{annotations: enabled, live: bootstrap, release: mgmt, applyMethod: "csa",
		hrMutate: func(hr *helmv2.HelmRelease) {
			hr.Spec.KubeConfig = &meta.KubeConfigReference{ConfigMapRef: &meta.LocalObjectReference{Name: "workload-identity"}}
		}, reads: asProduction})
	g := w.g
	before := w.versions()
	delete(before, "HelmRelease/cluster")
	w.reconcile()
	cond := w.condition()
	g.Expect(cond.Reason).To(Equal(api.InvalidConfigurationReason))
	g.Expect(cond.Message).To(ContainSubstring("configMapRef"))
	after := w.versions()
	delete(after, "HelmRelease/cluster")
	g.Expect(after).To(Equal(before), "nothing written on the local cluster")
}

// TestLockdownReadsKubeConfigAsServiceAccount: with the multi-tenancy
// lockdown (--default-service-account), the kubeconfig Secret is read as
// the account the HelmRelease impersonates, not as the controller: an
// account that may not read it gets the refusal, naming the account and the
// Secret, and one that may gets past it. The controller's own role then
// needs no Secret access (the chart drops it).
func TestLockdownReadsKubeConfigAsServiceAccount(t *testing.T) {
	w := newWorld(t, scenario{annotations: enabled, live: bootstrap, release: mgmt, applyMethod: "csa",
		hrMutate: func(hr *helmv2.HelmRelease) {
			hr.Spec.KubeConfig = &meta.KubeConfigReference{SecretRef: &meta.SecretKeyReference{Name: "tenant-kubeconfig"}}
		}, reads: asProduction, account: "tdc-tenant"})
	g := w.g
	kc, err := os.ReadFile(env.KubeConfigPath)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(env.Client.Create(w.ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "tenant-kubeconfig", Namespace: w.ns},
		Data: map[string][]byte{"value": kc}})).To(Succeed())
	g.Expect(env.Client.Create(w.ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "tdc-tenant", Namespace: w.ns}})).To(Succeed())
	before := w.versions()
	delete(before, "HelmRelease/cluster")

	w.reconcile()
	cond := w.condition()
	g.Expect(cond.Reason).To(Equal(api.ReleaseUnavailableReason))
	g.Expect(cond.Message).To(ContainSubstring("failed to read kubeconfig Secret " + w.ns + "/tenant-kubeconfig"))
	g.Expect(cond.Message).To(ContainSubstring("system:serviceaccount:" + w.ns + ":tdc-tenant"))
	g.Expect(cond.Message).To(ContainSubstring("forbidden"))

	w.grant("tdc-tenant", rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"},
		ResourceNames: []string{"tenant-kubeconfig"}, Verbs: []string{"get"}})
	g.Eventually(func() string {
		w.reconcile()
		return w.condition().Message
	}, 10*time.Second, 500*time.Millisecond).ShouldNot(ContainSubstring("failed to read kubeconfig Secret"))
	after := w.versions()
	delete(after, "HelmRelease/cluster")
	g.Expect(after).To(Equal(before), "the account may read only its kubeconfig: nothing is written")
}

// TestPreviousReleaseRemoval: a field the previous deployed release set,
// which this release dropped, is drift while it is still live.
func TestPreviousReleaseRemoval(t *testing.T) {
	withSelector := func(m string) string {
		return strings.Replace(m, "      dataTemplate: {name: mgmt-md0-metadata}", "      dataTemplate: {name: mgmt-md0-metadata}\n      hostSelector: {matchLabels: {pool: old}}", 1)
	}
	w := newWorld(t, scenario{annotations: enabled, live: mgmt, release: mgmt, applyMethod: "csa", liveMutate: func(o *unstructured.Unstructured) {
		if o.GetKind() == "Metal3MachineTemplate" && o.GetName() == "mgmt-md0" {
			_ = unstructured.SetNestedStringMap(o.Object, map[string]string{"pool": "old"}, "spec", "template", "spec", "hostSelector", "matchLabels")
		}
	}})
	g := w.g
	prev := w.rel
	prev.Manifest, prev.Status = withSelector(prev.Manifest), "superseded"
	g.Expect(testenv.StoreRelease(w.ctx, env, prev)).To(Succeed())
	w.storeAndRecord(2, "deployed", render(mgmt))

	g.Expect(w.reconcile()).To(Equal(1))
	// CAPM3's v1beta2 hostSelector is a struct, not a pointer: the server
	// keeps an empty hostSelector, and only its labels go.
	_, found, _ := unstructured.NestedMap(w.get(m3, "Metal3MachineTemplate", "mgmt-md0").Object, "spec", "template", "spec", "hostSelector", "matchLabels")
	g.Expect(found).To(BeFalse())
	g.Expect(w.events()).To(ContainElement(ContainSubstring("/spec/template/spec/hostSelector")), "the correcting event names the field")
}

// TestResync: a healthy pass asks to be run again after about the resync
// interval, at the workqueue's low priority so that watch events go first;
// a pass that must wait asks sooner, at its event's priority.
func TestResync(t *testing.T) {
	w := newWorld(t, scenario{annotations: enabled, live: mgmt, release: mgmt})
	res, err := w.r.Reconcile(w.ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(w.hr)})
	w.g.Expect(err).NotTo(HaveOccurred())
	w.g.Expect(res.RequeueAfter).To(BeNumerically(">=", 9*time.Minute))
	w.g.Expect(res.RequeueAfter).To(BeNumerically("<=", 11*time.Minute))
	w.g.Expect(res.Priority).To(HaveValue(Equal(handler.LowPriority)))
	w.g.Expect(reasonOf(w.condition())).To(Equal(api.NoDriftDetectedReason))

	w.storeAndRecord(2, "pending-upgrade", render(mgmt))
	res, err = w.r.Reconcile(w.ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(w.hr)})
	w.g.Expect(err).NotTo(HaveOccurred())
	w.g.Expect(reasonOf(w.condition())).To(Equal(api.ReleaseInProgressReason))
	w.g.Expect(res.RequeueAfter).To(BeNumerically(">", 0), "a wait is looked at again, without back-off")
	w.g.Expect(res.RequeueAfter).To(BeNumerically("<", time.Minute))
	w.g.Expect(res.Priority).To(BeNil())
}
