package controllers_test

import (
	"fmt"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/testenv"
)

// TestTenantTemplateInAnotherNamespace: under the lockdown, a tenant's
// release whose manifest places a template in another tenant's namespace
// (a forged release Secret, say) gets a clear reason naming the refusal of
// its own account, and nothing is written there: the pass reads and writes
// only as the tenant.
func TestTenantTemplateInAnotherNamespace(t *testing.T) {
	// Served from the informers where the tenant's access reviews allow
	// (asReviewed) or read live as the tenant: the same refusal.
	for name, how := range map[string]reads{"live": asProduction, "reviewed": asReviewed} {
		t.Run(name, func(t *testing.T) { tenantTemplateInAnotherNamespace(t, how) })
	}
}

func tenantTemplateInAnotherNamespace(t *testing.T, how reads) {
	w := newWorld(t, scenario{annotations: enabled, live: bootstrap, release: mgmt, applyMethod: "csa", reads: how, account: "tenant"})
	g := w.g
	other := w.ns + "-victim"
	g.Expect(env.Client.Create(w.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: other}})).To(Succeed())
	g.Expect(testenv.CreateLive(w.ctx, env.Client, other, "cluster", render(bootstrap), nil)).To(Succeed())
	g.Expect(env.Client.Create(w.ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "tenant", Namespace: w.ns}})).To(Succeed())
	w.grant("tenant", testenv.TenantRules()...)

	// The forged release: the management values, with every object placed
	// in the other namespace.
	var docs []string
	for _, d := range strings.Split(render(mgmt), "\n---\n") {
		docs = append(docs, strings.Replace(d, "metadata:\n", "metadata:\n  namespace: "+other+"\n", 1))
	}
	w.storeAndRecord(2, "deployed", strings.Join(docs, "\n---\n"))
	victim := versionsIn(w, other)
	w.reconcile()
	cond := w.condition()
	g.Expect(cond.Reason).To(Equal(api.AccessDeniedReason))
	g.Expect(cond.Message).To(ContainSubstring("system:serviceaccount:" + w.ns + ":tenant"))
	g.Expect(cond.Message).To(ContainSubstring("forbidden"))
	g.Expect(versionsIn(w, other)).To(Equal(victim), "nothing written in the other namespace")
}

// versionsIn returns the add-on's writes (its managedFields entries) to
// every template and consumer in namespace ns.
func versionsIn(w *world, ns string) map[string]string {
	out := map[string]string{}
	for _, k := range [][2]string{
		{"infrastructure.cluster.x-k8s.io/v1beta1", "Metal3MachineTemplate"},
		{"infrastructure.cluster.x-k8s.io/v1beta1", "Metal3DataTemplate"},
		{"cluster.x-k8s.io/v1beta2", "MachineDeployment"},
		{"controlplane.cluster.x-k8s.io/v1beta2", "KubeadmControlPlane"},
		{"bootstrap.cluster.x-k8s.io/v1beta2", "KubeadmConfigTemplate"},
	} {
		list := &unstructured.UnstructuredList{}
		list.SetAPIVersion(k[0])
		list.SetKind(k[1] + "List")
		w.g.Expect(env.Client.List(w.ctx, list, client.InNamespace(ns))).To(Succeed())
		for _, o := range list.Items {
			// The add-on's own field manager entries, not resourceVersion:
			// the real Cluster API and CAPM3 managers update these objects
			// (status, owners) on their own.
			var ours []string
			for _, f := range o.GetManagedFields() {
				if f.Manager == api.ControllerName {
					ours = append(ours, fmt.Sprintf("%s@%s:%s", f.Operation, f.Time, f.FieldsV1))
				}
			}
			out[k[1]+"/"+o.GetName()] = strings.Join(ours, ";")
		}
	}
	w.g.Expect(out).NotTo(BeEmpty())
	return out
}

// grant gives the service account sa of the world's namespace the rules
// there, with a Role and RoleBinding named after the account.
func (w *world) grant(sa string, rules ...rbacv1.PolicyRule) {
	w.t.Helper()
	name := sa + "-" + fmt.Sprint(len(rules)) + "-" + rules[0].Resources[0]
	w.g.Expect(env.Client.Create(w.ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.ns}, Rules: rules})).To(Succeed())
	w.g.Expect(env.Client.Create(w.ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: name},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa, Namespace: w.ns}}})).To(Succeed())
}

// TestObjectsOfAnotherRelease: a release whose manifest names a template
// and a consumer that another Helm release owns (their meta.helm.sh
// annotations name it, as a forged or stale release would) corrects its
// own templates, writes nothing to the other release's objects, and says
// so: False/OwnershipConflict naming both, with a Warning event. It used to
// report NoDriftDetected and list the template as skipped.
func TestObjectsOfAnotherRelease(t *testing.T) {
	ofVictim := func(o *unstructured.Unstructured) {
		if o.GetName() == "mgmt-md0" && (o.GetKind() == "Metal3MachineTemplate" || o.GetKind() == "MachineDeployment") {
			o.SetAnnotations(merge(o.GetAnnotations(), map[string]string{api.HelmReleaseNameAnnotation: "victim"}))
		}
	}
	w := newWorld(t, scenario{annotations: enabled, live: bootstrap, release: mgmt, applyMethod: "csa", liveMutate: ofVictim})
	g := w.g
	before := w.versions()
	g.Expect(w.reconcile()).To(BeNumerically(">", 0), "the release's own drifted template is corrected")
	after := w.versions()
	for _, k := range []string{"Metal3MachineTemplate/mgmt-md0", "MachineDeployment/mgmt-md0"} {
		g.Expect(after[k]).To(Equal(before[k]), "%s of the other release is never written", k)
	}
	g.Expect(after["Metal3MachineTemplate/mgmt-cp"]).NotTo(Equal(before["Metal3MachineTemplate/mgmt-cp"]), "the release's own template is corrected")
	cond := w.condition()
	g.Expect(cond.Status).To(Equal(metav1.ConditionFalse))
	g.Expect(cond.Reason).To(Equal(api.OwnershipConflictReason))
	g.Expect(cond.Message).To(ContainSubstring("Metal3MachineTemplate/mgmt-md0: owned by release " + w.ns + "/victim"))
	g.Expect(cond.Message).To(ContainSubstring("MachineDeployment/mgmt-md0: owned by release " + w.ns + "/victim"))
	g.Expect(w.events()).To(ContainElement(HavePrefix("Warning " + api.TemplateOwnershipConflictEvent)))

	// The next pass writes nothing and says the same.
	expectUntouched(w)
	g.Expect(w.condition().Reason).To(Equal(api.OwnershipConflictReason))
}
