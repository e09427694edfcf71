package controllers_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/testenv"
)

// TestTenantReadsFromInformers: under the lockdown with access reviews, a
// tenant's pass corrects its pivoted templates as the tenant, and then a
// pass over the healthy release makes one request as the tenant, the list
// of its release's Secrets: its Clusters, templates and consumers come from
// the informers, which its access reviews (made once, at the first pass)
// allow it to list.
func TestTenantReadsFromInformers(t *testing.T) {
	w := newWorld(t, scenario{annotations: enabled, live: bootstrap, release: mgmt, applyMethod: "csa",
		reads: asReviewed, account: "tenant"})
	g := w.g
	g.Expect(env.Client.Create(w.ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "tenant", Namespace: w.ns}})).To(Succeed())
	w.grant("tenant", testenv.TenantRules()...)

	w.reconcile()
	g.Expect(w.lastErr).NotTo(HaveOccurred())
	cond := w.condition()
	g.Expect(cond.Reason).To(Equal(api.DriftCorrectedReason), cond.Message)
	for _, name := range []string{"mgmt-md0", "mgmt-cp"} {
		g.Expect(str(w.get(m3, "Metal3MachineTemplate", name), "spec", "template", "spec", "image", "url")).To(Equal(mgmt.ImageURL))
	}
	first := w.accountRequests()
	g.Expect(first).To(ContainElement(HaveSuffix("/selfsubjectrulesreviews")), "the first pass asks")
	g.Expect(first).To(ContainElement(HavePrefix("PATCH /apis/infrastructure.cluster.x-k8s.io/")), "writes are made as the tenant")
	_, cached := w.cachedKinds.Load(schema.GroupVersionKind{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta1", Kind: "Metal3MachineTemplate"})
	g.Expect(cached).To(BeTrue(), "the tenant's templates were read from the informers")

	// The informers catch up with the pass's own patches.
	g.Eventually(func() []string {
		w.accountRequests()
		w.reconcile()
		return w.accountRequests()
	}).WithTimeout(10*time.Second).Should(Equal([]string{"GET /api/v1/namespaces/" + w.ns + "/secrets"}),
		"a steady-state pass: the release Secrets' list, nothing else")
	g.Expect(w.lastErr).NotTo(HaveOccurred())
	g.Expect(w.condition().Status).To(Equal(metav1.ConditionTrue))
}
