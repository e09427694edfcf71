//go:build e2e

package e2e

import (
	"context"
	"fmt"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/e2e/framework"
)

// The locked variants: what the add-on does with locked, drifted
// Metal3DataTemplates that the machine templates, claims and CAPM3's
// Metal3Data use, under each apply mode.

// uids maps the names of the objects of kind in the fleet namespace to their UIDs.
func (r *pivotRun) uids(ctx context.Context, kind string) map[string]string {
	objs, err := framework.List(ctx, r.mgmt.Client, infra, kind, ns)
	Expect(err).NotTo(HaveOccurred())
	out := map[string]string{}
	for _, o := range objs {
		out[o.GetName()] = string(o.GetUID())
	}
	return out
}

// blockedThenWayOut is the server-side-apply release with locked, drifted
// Metal3DataTemplates that the Metal3MachineTemplates use (and CAPM3's
// finalizer holds): a recreate could never finish, and Helm would set a
// rotation back. The add-on says so (CorrectionBlocked, with the ways out)
// and writes nothing. Then the user takes the first way out: the release
// switches to client-side apply, after which auto rotates.
func (r *pivotRun) blockedThenWayOut(ctx context.Context, before map[string]string) {
	c := r.mgmt.Client
	By("server-side apply: no correction of the in-use locked data templates can stick; the add-on says so and writes nothing")
	cond := r.awaitTemplatesInSync(ctx, api.CorrectionBlockedReason, "blocked")
	Expect(cond.Status).To(Equal(metav1.ConditionFalse))
	// The chart puts a content hash in template names, as Sylva's does.
	// The control-plane Machine's claim, and the Metal3Data CAPM3 rendered
	// for it, hold its data template as on a live cluster.
	Expect(cond.Message).To(MatchRegexp(`Metal3DataTemplate/mgmt-cp-metadata-[0-9a-f]+: correction blocked: .*in use by Metal3Data mgmt-cp-metadata-[0-9a-f]+-0, Metal3DataClaim mgmt-cp-[a-z0-9]+, Metal3MachineTemplate mgmt-cp-[0-9a-f]+; finalizer metal3datatemplate\.infrastructure\.cluster\.x-k8s\.io keeps it`))
	// The worker's data template has a claim only when its Metal3Machine
	// existed when the claims were given (a race with the MachineSet
	// controller). Without one, only its machine template holds it: CAPM3
	// would release its finalizer at once, so the finalizer is not named.
	Expect(cond.Message).To(Or(
		MatchRegexp(`Metal3DataTemplate/mgmt-md0-metadata-[0-9a-f]+: correction blocked: .*in use by Metal3MachineTemplate mgmt-md0-[0-9a-f]+\), and a rotation`),
		MatchRegexp(`Metal3DataTemplate/mgmt-md0-metadata-[0-9a-f]+: correction blocked: .*in use by Metal3Data mgmt-md0-metadata-[0-9a-f]+-0, Metal3DataClaim mgmt-md0-[a-z0-9-]+, Metal3MachineTemplate mgmt-md0-[0-9a-f]+; finalizer metal3datatemplate\.infrastructure\.cluster\.x-k8s\.io keeps it`)))
	Expect(cond.Message).To(ContainSubstring("upgrade with client-side apply (spec.upgrade.serverSideApply: disabled), after which auto rotates"))
	Consistently(func() map[string]string { return r.uids(ctx, "Metal3DataTemplate") }, "5s").Should(Equal(before), "nothing deleted, nothing created")
	m3dts, err := framework.List(ctx, c, infra, "Metal3DataTemplate", ns)
	Expect(err).NotTo(HaveOccurred())
	for _, dt := range m3dts {
		Expect(dt.GetDeletionTimestamp()).To(BeNil(), "%s is not left Terminating", dt.GetName())
	}
	out, err := framework.FluxCLI(ctx, suite.bins.Flux, r.mgmt.KubeConfigPath, "events", "-n", ns, "--for", "HelmRelease/cluster")
	Expect(err).NotTo(HaveOccurred())
	fmt.Fprintf(GinkgoWriter, "$ flux events -n %s --for HelmRelease/cluster\n%s\n", ns, out)
	Expect(out).To(ContainSubstring(api.TemplateCorrectionBlockedEvent))
	r.expectForwarded(ctx, api.TemplateCorrectionBlockedEvent)

	By("the way out: the release switches to client-side apply, and auto rotates")
	hr := framework.NewClusterHelmRelease(ns, framework.ClusterValues{}, true)
	Expect(c.Get(ctx, r.key, hr)).To(Succeed())
	base := hr.DeepCopy()
	hr.Spec.Upgrade.ServerSideApply = helmv2.ServerSideApplyDisabled
	Expect(c.Patch(ctx, hr, client.MergeFrom(base))).To(Succeed())
}

// expectLockedHealed checks the Metal3DataTemplates carry the management IP
// through the rotation auto picks on a client-side-apply release (the
// server-side-apply one was switched to client-side apply, its way out).
func (r *pivotRun) expectLockedHealed(ctx context.Context) {
	c := r.mgmt.Client
	Eventually(func() []string {
		m3mts, _ := framework.List(ctx, c, infra, "Metal3MachineTemplate", ns)
		var ips []string
		for _, m := range m3mts {
			dt, err := framework.Get(ctx, c, infra, "Metal3DataTemplate", ns, dataTemplate(&m))
			if err != nil {
				return nil
			}
			ips = append(ips, metaIP(dt))
		}
		return ips
	}).Should(ConsistOf(mgmtIP, mgmtIP))
	m3dts, err := framework.List(ctx, c, infra, "Metal3DataTemplate", ns)
	Expect(err).NotTo(HaveOccurred())
	Expect(m3dts).To(HaveLen(4), "two originals, two hash-named replacements")
	for _, dt := range m3dts {
		if repl := dt.GetAnnotations()[api.SupersededByAnnotation]; repl != "" {
			Expect(repl).To(HavePrefix(dt.GetName() + "-"))
		}
	}
}
