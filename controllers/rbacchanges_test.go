package controllers_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/templatedrift/template-drift-controller/controllers"
	"github.com/templatedrift/template-drift-controller/internal/apply"
	"github.com/templatedrift/template-drift-controller/internal/testenv"
)

// TestRBACChanges: on a real API server, an impersonated account's rights
// are asked once (one rules review answers every kind), kept while no RBAC
// object changes, and asked again as soon as one does, and once more when
// the change has settled: a revoked binding stops cached reads, and a grant
// starts them, within that settle.
func TestRBACChanges(t *testing.T) {
	g := NewWithT(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ns := "rbac-changes"
	g.Expect(env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	g.Expect(testenv.GrantTenant(ctx, env.Client, ns, "tenant", testenv.TenantRules())).To(Succeed())

	cache, err := ctrlcache.New(env.Config, ctrlcache.Options{Scheme: testenv.Scheme()})
	g.Expect(err).NotTo(HaveOccurred())
	cs := kubernetes.NewForConfigOrDie(env.Config)
	reviews := apply.NewAccessReviews(time.Hour)
	g.Expect(controllers.WatchRBAC(ctx, ctrl.Log, cs, cache, reviews)).To(Succeed())
	done := make(chan error)
	go func() { done <- cache.Start(ctx) }()
	defer func() { cancel(); g.Expect(<-done).To(Succeed()) }()
	g.Expect(cache.WaitForCacheSync(ctx)).To(BeTrue())

	asTenant := rest.CopyConfig(env.Config)
	asTenant.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + ns + ":tenant"}
	asker := kubernetes.NewForConfigOrDie(asTenant).AuthorizationV1()
	user := asTenant.Impersonate.UserName
	m3mt := schema.GroupResource{Group: "infrastructure.cluster.x-k8s.io", Resource: "metal3machinetemplates"}
	md := schema.GroupResource{Group: "cluster.x-k8s.io", Resource: "machinedeployments"}
	helmReleases := schema.GroupResource{Group: "helm.toolkit.fluxcd.io", Resource: "helmreleases"}

	g.Expect(reviews.MayList(ctx, asker, user, ns, m3mt)).To(BeTrue())
	g.Expect(reviews.MayList(ctx, asker, user, ns, md)).To(BeTrue())
	g.Expect(reviews.MayList(ctx, asker, user, ns, helmReleases)).To(BeFalse(), "the tenant's Role does not grant it")
	g.Expect(reviews.MayList(ctx, asker, user, "default", m3mt)).To(BeFalse(), "nor another namespace")
	g.Expect(reviews.Made()).To(BeEquivalentTo(2), "one rules review a namespace")

	t.Log("an RBAC object elsewhere changes: the rules are asked again")
	other := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "rbac-changes-unrelated"}}
	g.Expect(env.Client.Create(ctx, other)).To(Succeed())
	defer func() { g.Expect(env.Client.Delete(context.Background(), other)).To(Succeed()) }()
	g.Eventually(func() int64 {
		reviews.MayList(ctx, asker, user, ns, m3mt)
		return reviews.Made()
	}).Should(BeEquivalentTo(3))
	g.Consistently(func() int64 {
		g.Expect(reviews.MayList(ctx, asker, user, ns, m3mt)).To(BeTrue())
		return reviews.Made()
	}, 2*time.Second).Should(BeEquivalentTo(3), "kept while nothing changes")

	t.Log("the tenant's binding is deleted: its next pass reads live")
	g.Expect(env.Client.Delete(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "tenant", Namespace: ns}})).To(Succeed())
	// The API server's authorizer may see the change after the controller
	// does: an answer asked before it settles is asked again 10 s later.
	g.Eventually(func() bool { return reviews.MayList(ctx, asker, user, ns, m3mt) }, 15*time.Second, 100*time.Millisecond).Should(BeFalse())

	t.Log("a binding grants it again: its next pass reads from the informers")
	g.Expect(env.Client.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "tenant", Namespace: ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "tenant"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "tenant", Namespace: ns}}})).To(Succeed())
	g.Eventually(func() bool { return reviews.MayList(ctx, asker, user, ns, m3mt) }, 15*time.Second, 100*time.Millisecond).Should(BeTrue())
}
