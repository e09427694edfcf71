package chart_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tdcmanifest "github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/preview"
	"github.com/templatedrift/template-drift-controller/internal/testenv"

	. "github.com/onsi/gomega"
)

// TestPreviewRole runs a preview as a user bound to the chart's optional
// preview ClusterRole only, and held to dry-runs by the chart's optional
// ValidatingAdmissionPolicy: a renamed bootstrap template, whose upgrade
// creates one template, patches the MachineDeployment and deletes the old
// template, so every dry-run verb is asked, and the policy lets them by; a
// real write by the same user, which the role allows, the policy refuses.
// Then the same role without delete must fail the preview with the API
// server's forbidden: the role is what the preview needs, not more than the
// test happens to check.
func TestPreviewRole(t *testing.T) {
	env := sharedEnv(t)
	ctx := t.Context()
	g := NewWithT(t)

	_, objs := mustRender(t, "values-preview.yaml")
	roles := ofKind(objs, "ClusterRole")
	var role *unstructured.Unstructured
	for _, r := range roles {
		if strings.HasSuffix(r.GetName(), "-preview") {
			role = r
		}
	}
	g.Expect(role).NotTo(BeNil(), "the preview ClusterRole is rendered with preview.clusterRole.create")

	const user = "tdc-chart-previewer"
	g.Expect(env.Client.Create(ctx, role)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), role) })
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.GetName()},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	}
	g.Expect(env.Client.Create(ctx, binding)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), binding) })

	policies := append(ofKind(objs, "ValidatingAdmissionPolicy"), ofKind(objs, "ValidatingAdmissionPolicyBinding")...)
	g.Expect(policies).To(HaveLen(2), "the dry-run-only policy and its binding are rendered with preview.dryRunOnly")
	for _, p := range policies {
		g.Expect(env.Client.Create(ctx, p)).To(Succeed())
		t.Cleanup(func() { _ = env.Client.Delete(context.Background(), p) })
	}

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "preview-role-"}}
	g.Expect(env.Client.Create(ctx, ns)).To(Succeed())
	hr, err := testenv.InstallClusterChart(ctx, env, ns.Name, "csa")
	g.Expect(err).NotTo(HaveOccurred())
	hr.Spec.Values = &apiextensionsv1.JSON{Raw: []byte(`{"kubeletArgs": {"max-pods": "200"}}`)}
	kinds, err := tdcmanifest.ParseKinds(tdcmanifest.DefaultTemplateKinds)
	g.Expect(err).NotTo(HaveOccurred())

	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	as, err := client.New(cfg, client.Options{Scheme: testenv.Scheme()})
	g.Expect(err).NotTo(HaveOccurred())
	run := func() (preview.Report, error) {
		return preview.Run(ctx, preview.Request{HelmRelease: hr.DeepCopy(), Local: as, Target: as,
			TargetConfig: cfg, Kinds: kinds, Now: time.Now()})
	}

	// RBAC and admission policies reach the API server through its
	// informers: a fresh binding or policy may be a moment late. A real
	// write that the role allows is refused once the policy holds.
	md := &unstructured.Unstructured{}
	md.SetAPIVersion("cluster.x-k8s.io/v1beta2")
	md.SetKind("MachineDeployment")
	md.SetNamespace(ns.Name)
	md.SetName("mgmt-md0")
	write := client.RawPatch(types.MergePatchType, []byte(`{"metadata": {"labels": {"written": "for-real"}}}`))
	g.Eventually(func() error { return as.Patch(ctx, md.DeepCopy(), write) }).WithTimeout(30*time.Second).Should(
		MatchError(ContainSubstring("the preview identity "+user+" may only send dry-runs")), "a real write by the preview identity")
	g.Expect(as.Patch(ctx, md.DeepCopy(), write, client.DryRunAll)).To(Succeed(), "the same write as a dry-run")
	var rep preview.Report
	g.Eventually(func() error { rep, err = run(); return err }).WithTimeout(30 * time.Second).Should(Succeed())
	var changes []string
	for _, o := range rep.Objects {
		if o.Change != preview.ChangeNone {
			changes = append(changes, o.Kind+" "+o.Change)
		}
	}
	g.Expect(changes).To(ContainElements("KubeadmConfigTemplate "+preview.ChangeCreate,
		"KubeadmConfigTemplate "+preview.ChangeDelete, "MachineDeployment "+preview.ChangeUpdate))

	// The scratch copy: the same role without delete.
	var cr rbacv1.ClusterRole
	g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(role.Object, &cr)).To(Succeed())
	live := &rbacv1.ClusterRole{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: cr.Name}, live)).To(Succeed())
	for i := range live.Rules {
		live.Rules[i].Verbs = slices.DeleteFunc(live.Rules[i].Verbs, func(v string) bool { return v == "delete" })
	}
	g.Expect(env.Client.Update(ctx, live)).To(Succeed())
	g.Eventually(func() error { _, err = run(); return err }).WithTimeout(30*time.Second).Should(
		MatchError(ContainSubstring("forbidden")), "a preview whose role lacks delete must fail, naming the refusal")
}
