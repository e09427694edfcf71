package controllers_test

import (
	"context"
	"strings"
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/kustomize"
	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/controllers"
	"github.com/templatedrift/template-drift-controller/internal/apply"
	"github.com/templatedrift/template-drift-controller/internal/pair"
)

// TestLongReleaseNameIsShortenedAsHelmControllerDoes: with a target
// namespace the release is "<targetNamespace>-<name>", which helm-controller
// shortens above 53 characters; the add-on reads the release under the same
// shortened name.
func TestLongReleaseNameIsShortenedAsHelmControllerDoes(t *testing.T) {
	w := newWorld(t, scenario{annotations: enabled, live: bootstrap, release: mgmt, applyMethod: "csa", targetSelf: true})
	w.g.Expect(len(w.ns + "-cluster")).To(BeNumerically(">", 53))
	w.g.Expect(len(w.rel.Name)).To(Equal(53))
	w.g.Expect(w.reconcile()).To(Equal(2))
	w.g.Expect(reasonOf(w.condition())).To(Equal(api.DriftCorrectedReason))
}

// TestInvalidIgnoreRule: an ignore rule whose selector does not compile is a
// configuration error, reported, with nothing written.
func TestInvalidIgnoreRule(t *testing.T) {
	w := newWorld(t, scenario{annotations: enabled, live: bootstrap, release: mgmt, hrMutate: func(hr *helmv2.HelmRelease) {
		hr.Spec.DriftDetection = &helmv2.DriftDetection{Ignore: []helmv2.IgnoreRule{{
			Paths: []string{"/spec"}, Target: &kustomize.Selector{Name: "([unclosed"}}}}
	}})
	expectUntouched(w)
	cond := w.condition()
	w.g.Expect(cond.Status).To(Equal(metav1.ConditionFalse))
	w.g.Expect(cond.Reason).To(Equal(api.InvalidConfigurationReason))
	w.g.Expect(cond.Message).To(ContainSubstring("spec.driftDetection.ignore"))
}

// TestRecreateRefusedKeepsTemplate: a recreate whose manifest object the
// server would refuse is found out by a dry-run before the delete, so the
// live template is never lost.
func TestRecreateRefusedKeepsTemplate(t *testing.T) {
	badRelease := mgmt
	w := newWorld(t, scenario{annotations: withStrategy(api.StrategyRecreate), live: bootstrap, release: badRelease})
	// The stored manifest names a checksum-less image, which the CRD refuses.
	broken := strings.ReplaceAll(render(mgmt), `checksum: "http://192.168.100.2/images/ubuntu.qcow2.sha256sum", `, "")
	w.storeAndRecord(2, "deployed", broken)
	uid := w.get(m3, "Metal3MachineTemplate", "mgmt-cp").GetUID()
	w.g.Expect(w.reconcile()).To(Equal(0), "nothing deleted")
	w.g.Expect(w.get(m3, "Metal3MachineTemplate", "mgmt-cp").GetUID()).To(Equal(uid))
	cond := w.condition()
	w.g.Expect(cond.Reason).To(Equal(api.CorrectionFailedReason))
	w.g.Expect(cond.Message).To(ContainSubstring("the server refuses the manifest's object"))
}

// TestUpgradeApplyMethod: auto looks at how Helm will apply the next
// upgrade: spec.upgrade.serverSideApply overrides the stored release's
// method when it is enabled or disabled.
func TestUpgradeApplyMethod(t *testing.T) {
	cases := []struct {
		name        string
		applyMethod string                     // stored release
		upgrade     helmv2.ServerSideApplyMode // spec.upgrade.serverSideApply
		rotated     bool                       // true: rotate; false: recreate
	}{
		{name: "csa release, ssa upgrades", applyMethod: "csa", upgrade: helmv2.ServerSideApplyEnabled, rotated: false},
		{name: "ssa release, csa upgrades", applyMethod: "ssa", upgrade: helmv2.ServerSideApplyDisabled, rotated: true},
		{name: "ssa release, auto", applyMethod: "ssa", upgrade: helmv2.ServerSideApplyAuto, rotated: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, scenario{annotations: enabled, live: lockedLive, release: lockedRelease, applyMethod: tc.applyMethod,
				hrMutate: func(hr *helmv2.HelmRelease) { hr.Spec.Upgrade = &helmv2.Upgrade{ServerSideApply: tc.upgrade} }})
			w.reconcile()
			want := "LockedMachineTemplate/mgmt-cp: recreate"
			if tc.rotated {
				want = "LockedMachineTemplate/mgmt-cp: rotate to mgmt-cp-"
			}
			w.g.Expect(w.condition().Message).To(ContainSubstring(want))
		})
	}
}

// TestConflictIsRetriedQuietly: losing a write race is not a failure: the
// pass starts over soon, and no CorrectionFailed is reported.
func TestConflictIsRetriedQuietly(t *testing.T) {
	w := newWorld(t, scenario{annotations: enabled, live: bootstrap, release: mgmt})
	target, err := w.r.Targets.For(w.ctx, w.hr)
	w.g.Expect(err).NotTo(HaveOccurred())
	conflicted := false
	racy := interceptor.NewClient(env.Client, interceptor.Funcs{
		Patch: func(ctx context.Context, c client.WithWatch, o client.Object, p client.Patch, opts ...client.PatchOption) error {
			po := &client.PatchOptions{}
			po.ApplyOptions(opts)
			if len(po.DryRun) == 0 && !conflicted {
				conflicted = true
				return apierrors.NewConflict(schema.GroupResource{Resource: "metal3machinetemplates"}, o.GetName(), nil)
			}
			return c.Patch(ctx, o, p, opts...)
		},
	})
	w.r.Targets = staticTarget{t: &apply.Target{Client: racy, Secrets: target.Secrets, Key: "racy"}}
	res, err := w.r.Reconcile(w.ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(w.hr)})
	w.g.Expect(err).NotTo(HaveOccurred())
	w.g.Expect(res.RequeueAfter).To(BeNumerically("<=", 1e9))
	w.g.Expect(w.condition()).To(BeNil(), "no failure reported for a lost race")
	w.g.Expect(w.events()).To(BeEmpty())
	_, err = w.r.Reconcile(w.ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(w.hr)})
	w.g.Expect(err).NotTo(HaveOccurred())
	w.g.Expect(reasonOf(w.condition())).To(Equal(api.DriftCorrectedReason))
}

// TestForbiddenKindsAreNotWatched: a kind the controller's identity may not
// list and watch is left out of the watches (a watch on it would never sync
// and would stop the manager).
func TestForbiddenKindsAreNotWatched(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "tdc-watch-test"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{"infrastructure.cluster.x-k8s.io"}, Resources: []string{"metal3machinetemplates"}, Verbs: []string{"list", "watch"}},
	}}
	g.Expect(env.Client.Create(ctx, role)).To(Succeed())
	g.Expect(env.Client.Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "tdc-watch-test"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "tdc-watch-test"},
		Subjects: []rbacv1.Subject{{Kind: "User", Name: "tdc-watch-test"}}})).To(Succeed())
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "tdc-watch-test"}
	kinds, err := pair.ParseKinds(pair.DefaultTemplateKinds)
	g.Expect(err).NotTo(HaveOccurred())
	got, err := controllers.ResolveWatchKinds(ctx, cfg, kinds)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got.Watch).To(ConsistOf(schema.GroupVersionKind{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta1", Kind: "Metal3MachineTemplate"}))
	g.Expect(got.Forbidden).To(ContainElements(
		HaveField("Kind", "LockedMachineTemplate"), HaveField("Kind", "Metal3DataTemplate"), HaveField("Kind", "MachineDeployment")))
	g.Expect(got.Forbidden).NotTo(ContainElement(HaveField("Kind", "MachineSet")), "MachineSets are never watched")

	admin, err := controllers.ResolveWatchKinds(ctx, env.Config, kinds)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(admin.Forbidden).To(BeEmpty())
	g.Expect(admin.Watch).To(ContainElement(HaveField("Kind", "RKE2ControlPlane")))
}
