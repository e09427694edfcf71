package controllers_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/controllers"
	"github.com/templatedrift/template-drift-controller/internal/manifest"
)

// TestForbiddenKindsAreNotWatched: a kind the controller's identity may not
// list and watch is left out of the watches (a watch on it would never sync
// and would stop the manager).
func TestForbiddenKindsAreNotWatched(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "tdc-watch-test"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{"infrastructure.cluster.x-k8s.io"}, Resources: []string{"metal3machinetemplates"}, Verbs: []string{"list", "watch"}},
	}}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "tdc-watch-test"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "tdc-watch-test"},
		Subjects: []rbacv1.Subject{{Kind: "User", Name: "tdc-watch-test"}}}
	for _, o := range []client.Object{role, binding} {
		g.Expect(env.Client.Create(ctx, o)).To(Succeed())
		// Cluster-scoped: the shared control plane outlives the test.
		t.Cleanup(func() { _ = env.Client.Delete(context.Background(), o) })
	}
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "tdc-watch-test"}
	kinds, err := manifest.ParseKinds(manifest.DefaultTemplateKinds)
	g.Expect(err).NotTo(HaveOccurred())
	got, err := controllers.ResolveWatchKinds(ctx, cfg, kinds)
	g.Expect(err).NotTo(HaveOccurred())
	// The preferred version is watched: v1beta2 on CAPM3 v1.13.
	g.Expect(got.Watch).To(ConsistOf(schema.GroupVersionKind{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta2", Kind: "Metal3MachineTemplate"}))
	g.Expect(got.Forbidden).To(ContainElements(
		HaveField("Kind", "LockedMachineTemplate"), HaveField("Kind", "Metal3DataTemplate"), HaveField("Kind", "MachineDeployment")))
	g.Expect(got.Forbidden).NotTo(ContainElement(HaveField("Kind", "MachineSet")), "MachineSets are never watched")

	admin, err := controllers.ResolveWatchKinds(ctx, env.Config, kinds)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(admin.Forbidden).To(BeEmpty())
	g.Expect(admin.Watch).To(ContainElement(HaveField("Kind", "RKE2ControlPlane")))
}
