package chart_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/internal/testenv"

	. "github.com/onsi/gomega"
)

// TestServiceAccountAccess installs the chart's RBAC with its default
// values and asks the API server, as the chart's ServiceAccount, what it may
// do: everything the controller needs, and nothing next to it (writes to
// Secrets or HelmRelease specs, Leases outside the release namespace, user
// impersonation, kinds that are not templates or consumers).
func TestServiceAccountAccess(t *testing.T) {
	env := sharedEnv(t)
	ctx := t.Context()
	g := NewWithT(t)
	const ns = "tdc-access"
	g.Expect(env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	files, err := renderRelease(t, map[string]any{}, "tdc-access", ns)
	g.Expect(err).NotTo(HaveOccurred())
	objs, err := decodeObjects([]byte(manifest(files)))
	g.Expect(err).NotTo(HaveOccurred())
	for _, kind := range []string{"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"} {
		for _, o := range ofKind(objs, kind) {
			g.Expect(env.Client.Create(ctx, o)).To(Succeed(), objectKey(o))
			if o.GetNamespace() == "" {
				// Cluster-scoped: the shared control plane outlives the test.
				t.Cleanup(func() { _ = env.Client.Delete(context.Background(), o) })
			}
		}
	}
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{
		UserName: fmt.Sprintf("system:serviceaccount:%s:%s", ns, ofKind(objs, "ServiceAccount")[0].GetName()),
	}
	sa, err := client.New(cfg, client.Options{Scheme: testenv.Scheme()})
	g.Expect(err).NotTo(HaveOccurred())

	const (
		flux  = "helm.toolkit.fluxcd.io"
		capi  = "cluster.x-k8s.io"
		infra = "infrastructure.cluster.x-k8s.io"
		cp    = "controlplane.cluster.x-k8s.io"
		coord = "coordination.k8s.io"
	)
	cases := []struct {
		// verb, group, resource and namespace ("" is all) of the request.
		verb, group, resource, namespace string
		// allowed is whether the ServiceAccount may do it.
		allowed bool
	}{
		{"watch", flux, "helmreleases", "", true},
		{"patch", flux, "helmreleases/status", "fleet", true},
		{"patch", flux, "helmreleases", "fleet", false},
		{"update", flux, "helmreleases/status", "fleet", false},
		{"list", "", "secrets", "", true},
		{"get", "", "secrets", "fleet", true},
		{"watch", "", "secrets", "", true},
		{"create", "", "secrets", "fleet", false},
		{"update", "", "secrets", "fleet", false},
		{"patch", "", "secrets", "fleet", false},
		{"delete", "", "secrets", "fleet", false},
		{"impersonate", "", "serviceaccounts", "fleet", true},
		{"impersonate", "", "users", "", false},
		{"impersonate", "", "groups", "", false},
		{"create", "", "serviceaccounts/token", "fleet", false},
		{"create", "", "events", "fleet", true},
		{"patch", "events.k8s.io", "events", "fleet", true},
		{"delete", "", "events", "fleet", false},
		{"get", "", "configmaps", "fleet", false},
		{"delete", infra, "metal3machinetemplates", "fleet", true},
		{"create", infra, "metal3datatemplates", "fleet", true},
		{"update", infra, "metal3machinetemplates", "fleet", false},
		{"get", infra, "dockermachinetemplates", "fleet", false},
		{"get", infra, "metal3machines", "fleet", false},
		{"patch", "bootstrap.cluster.x-k8s.io", "kubeadmconfigtemplates", "fleet", true},
		{"get", "bootstrap.cluster.x-k8s.io", "kubeadmconfigs", "fleet", false},
		{"patch", capi, "machinedeployments", "fleet", true},
		{"delete", capi, "machinedeployments", "fleet", false},
		{"watch", capi, "clusters", "", true},
		{"patch", capi, "clusters", "fleet", true},
		{"update", capi, "clusters", "fleet", false},
		{"delete", capi, "clusters", "fleet", false},
		{"list", capi, "machinesets", "fleet", true},
		{"patch", capi, "machinesets", "fleet", false},
		{"patch", capi, "machinepools", "fleet", true},
		{"list", infra, "metal3dataclaims", "fleet", true},
		{"list", infra, "metal3datas", "fleet", true},
		{"patch", infra, "metal3dataclaims", "fleet", false},
		{"delete", infra, "metal3datas", "fleet", false},
		{"get", capi, "machines", "fleet", false},
		{"patch", cp, "kubeadmcontrolplanes", "fleet", true},
		{"patch", cp, "rke2controlplanes", "fleet", true},
		{"create", cp, "kubeadmcontrolplanes", "fleet", false},
		{"get", coord, "leases", ns, true},
		{"create", coord, "leases", ns, true},
		{"update", coord, "leases", ns, true},
		{"delete", coord, "leases", ns, false},
		{"get", coord, "leases", "kube-system", false},
	}
	for _, tc := range cases {
		ssar := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Verb: tc.verb, Group: tc.group, Resource: tc.resource, Namespace: tc.namespace,
			},
		}}
		if res, sub, ok := strings.Cut(tc.resource, "/"); ok {
			ssar.Spec.ResourceAttributes.Resource, ssar.Spec.ResourceAttributes.Subresource = res, sub
		}
		g.Expect(sa.Create(ctx, ssar)).To(Succeed())
		g.Expect(ssar.Status.Allowed).To(Equal(tc.allowed), "%s %q %s in %q: %s", tc.verb, tc.group, tc.resource, tc.namespace, ssar.Status.Reason)
	}
}
