package testenv

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TenantRules are what a tenant's ServiceAccount needs in its namespace for
// its release, as helm-controller's would: Helm's storage (only the Secrets
// named, when secretNames are given), and the Cluster API and infrastructure
// objects its chart renders. The integration tests, the e2e suite and the
// chaos harness's lockdown give tenants these rules, so that all three test
// the same lockdown.
func TenantRules(secretNames ...string) []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "list"}, ResourceNames: secretNames},
		{APIGroups: []string{"cluster.x-k8s.io", "controlplane.cluster.x-k8s.io", "bootstrap.cluster.x-k8s.io", "infrastructure.cluster.x-k8s.io"},
			Resources: []string{"*"}, Verbs: []string{"get", "list", "watch", "patch", "create", "delete"}},
	}
}

// GrantTenant creates the ServiceAccount name in namespace with rules,
// bound by a Role of the same name: the account that the chart's lockdown
// (defaultServiceAccount) impersonates for the namespace's HelmReleases.
func GrantTenant(ctx context.Context, c client.Client, namespace, name string, rules []rbacv1.PolicyRule) error {
	objs := []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}, Rules: rules},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: namespace}}},
	}
	for _, o := range objs {
		if err := c.Create(ctx, o); err != nil {
			return fmt.Errorf("failed to create the tenant account %s/%s: %w", namespace, name, err)
		}
	}
	return nil
}
