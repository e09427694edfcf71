package chart_test

import (
	"fmt"
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"

	. "github.com/onsi/gomega"
)

// rulesOf returns the rules of a (Cluster)Role.
func rulesOf(t testing.TB, o *unstructured.Unstructured) []rbacv1.PolicyRule {
	t.Helper()
	var role rbacv1.ClusterRole // a Role has the same rules field
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &role); err != nil {
		t.Fatalf("failed to convert %s: %v", objectKey(o), err)
	}
	return role.Rules
}

// grants flattens rules into "group resource verb" triples, which compare
// equal whatever way the rules are grouped or ordered.
func grants(rules []rbacv1.PolicyRule) sets.Set[string] {
	out := sets.New[string]()
	for _, r := range rules {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					out.Insert(fmt.Sprintf("%q %s %s", g, res, v))
				}
			}
		}
	}
	return out
}

// onlyClusterRole returns the single ClusterRole among objs.
func onlyClusterRole(t testing.TB, objs []*unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	roles := ofKind(objs, "ClusterRole")
	if len(roles) != 1 {
		t.Fatalf("want 1 ClusterRole, got %d", len(roles))
	}
	return roles[0]
}

// TestNoWildcards checks every role of every render, of config/ and of the
// generated role: least privilege means no "*" anywhere and no
// non-resource URLs.
func TestNoWildcards(t *testing.T) {
	sources := map[string][]*unstructured.Unstructured{
		"config/rbac/role.yaml": readObjects(t, "config", "rbac", "role.yaml"),
		"config/default":        buildKustomize(t, "config/default"),
	}
	for _, tc := range goldenCases {
		_, sources["chart "+tc.name] = mustRender(t, tc.values)
	}
	for name, objs := range sources {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			roles := append(ofKind(objs, "ClusterRole"), ofKind(objs, "Role")...)
			g.Expect(roles).NotTo(BeEmpty())
			for _, o := range roles {
				for i, r := range rulesOf(t, o) {
					for field, vals := range map[string][]string{
						"apiGroups": r.APIGroups, "resources": r.Resources, "verbs": r.Verbs, "resourceNames": r.ResourceNames,
					} {
						g.Expect(vals).NotTo(ContainElement(ContainSubstring("*")), "%s rule %d %s", objectKey(o), i, field)
					}
					g.Expect(r.NonResourceURLs).To(BeEmpty(), "%s rule %d", objectKey(o), i)
					g.Expect(r.Verbs).NotTo(BeEmpty(), "%s rule %d", objectKey(o), i)
				}
			}
		})
	}
}

// TestClusterRoleMatchesGenerated keeps the chart's ClusterRole and the one
// controller-gen generates from the markers in controllers/ (make manifests)
// granting exactly the same for the default values.
func TestClusterRoleMatchesGenerated(t *testing.T) {
	g := NewWithT(t)
	generated := grants(rulesOf(t, onlyClusterRole(t, readObjects(t, "config", "rbac", "role.yaml"))))
	_, objs := mustRender(t, "")
	chart := grants(rulesOf(t, onlyClusterRole(t, objs)))
	g.Expect(sets.List(chart.Difference(generated))).To(BeEmpty(), "granted by the chart only")
	g.Expect(sets.List(generated.Difference(chart))).To(BeEmpty(), "granted by config/rbac/role.yaml only")
}

// TestExtraTemplateKinds checks that templateKinds.rbac adds exactly the
// template verbs on the listed resources, and nothing else.
func TestExtraTemplateKinds(t *testing.T) {
	g := NewWithT(t)
	_, def := mustRender(t, "")
	ext := renderExtended(t, "") // without the lockdown the extended values set
	added := grants(rulesOf(t, onlyClusterRole(t, ext))).Difference(grants(rulesOf(t, onlyClusterRole(t, def))))
	want := sets.New[string]()
	for _, res := range []string{"dockermachinetemplates", "openstackmachinetemplates"} {
		for _, v := range []string{"get", "list", "watch", "create", "patch", "delete"} {
			want.Insert(fmt.Sprintf("%q %s %s", "infrastructure.cluster.x-k8s.io", res, v))
		}
	}
	g.Expect(sets.List(added)).To(Equal(sets.List(want)))
}

// renderExtended renders values-extended.yaml with defaultServiceAccount
// set to sa.
func renderExtended(t testing.TB, sa string) []*unstructured.Unstructured {
	t.Helper()
	vals := readValues(t, "values-extended.yaml")
	vals["defaultServiceAccount"] = sa
	files, err := renderChart(t, vals)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := decodeObjects([]byte(manifest(files)))
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// TestLockdownRole: with defaultServiceAccount set (the multi-tenancy
// lockdown), every pass reads and writes as the impersonated account, so
// the ClusterRole drops every Secret grant and every write on templates
// and consumers, and adds nothing; what stays lets the controller list and
// watch them (its watches), write HelmRelease status and events, and
// impersonate.
func TestLockdownRole(t *testing.T) {
	g := NewWithT(t)
	open := grants(rulesOf(t, onlyClusterRole(t, renderExtended(t, ""))))
	locked := grants(rulesOf(t, onlyClusterRole(t, renderExtended(t, "tenant-deployer"))))
	g.Expect(sets.List(locked.Difference(open))).To(BeEmpty(), "the lockdown adds nothing")
	want := sets.New[string]()
	for _, v := range []string{"get", "list", "watch"} {
		want.Insert(fmt.Sprintf("%q secrets %s", "", v))
	}
	for group, resources := range map[string][]string{
		"cluster.x-k8s.io":              {"clusters", "machinedeployments", "machinepools"},
		"controlplane.cluster.x-k8s.io": {"kubeadmcontrolplanes", "rke2controlplanes"},
	} {
		for _, res := range resources {
			want.Insert(fmt.Sprintf("%q %s patch", group, res))
		}
	}
	for group, resources := range map[string][]string{
		"infrastructure.cluster.x-k8s.io": {"metal3machinetemplates", "metal3datatemplates", "dockermachinetemplates", "openstackmachinetemplates"},
		"bootstrap.cluster.x-k8s.io":      {"kubeadmconfigtemplates", "rke2configtemplates"},
	} {
		for _, res := range resources {
			for _, v := range []string{"create", "delete", "patch"} {
				want.Insert(fmt.Sprintf("%q %s %s", group, res, v))
			}
		}
	}
	g.Expect(sets.List(open.Difference(locked))).To(Equal(sets.List(want)))
	for _, grant := range []string{`"helm.toolkit.fluxcd.io" helmreleases/status patch`, `"" serviceaccounts impersonate`,
		`"" events create`, `"infrastructure.cluster.x-k8s.io" metal3machinetemplates watch`} {
		g.Expect(locked.Has(grant)).To(BeTrue(), grant)
	}
}

// TestLeaderElectionRole checks the only namespaced grant: the Lease verbs
// leader election needs, in the release namespace, bound to the controller.
func TestLeaderElectionRole(t *testing.T) {
	g := NewWithT(t)
	_, objs := mustRender(t, "")
	roles := ofKind(objs, "Role")
	g.Expect(roles).To(HaveLen(1))
	g.Expect(roles[0].GetNamespace()).To(Equal(namespace))
	got := sets.List(grants(rulesOf(t, roles[0])))
	g.Expect(got).To(Equal(slices.Sorted(slices.Values([]string{
		`"coordination.k8s.io" leases create`, `"coordination.k8s.io" leases get`, `"coordination.k8s.io" leases update`,
	}))))

	vals, err := readValuesString("leaderElection:\n  enabled: false")
	g.Expect(err).NotTo(HaveOccurred())
	files, err := renderChart(t, vals)
	g.Expect(err).NotTo(HaveOccurred())
	off, err := decodeObjects([]byte(manifest(files)))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ofKind(off, "Role")).To(BeEmpty())
	g.Expect(ofKind(off, "RoleBinding")).To(BeEmpty())
}
