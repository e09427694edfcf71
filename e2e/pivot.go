//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/e2e/framework"
	"github.com/templatedrift/template-drift-controller/internal/preview"
	"github.com/templatedrift/template-drift-controller/internal/testenv"
	"github.com/templatedrift/template-drift-controller/internal/testenv/move"
)

const (
	ns        = "fleet"
	infra     = "infrastructure.cluster.x-k8s.io/v1beta1"
	bootURL   = "http://10.10.10.17/images/ubuntu.qcow2"
	mgmtURL   = "http://192.168.100.2/images/ubuntu.qcow2"
	bootIP    = "10.10.10.17"
	mgmtIP    = "192.168.100.2"
	readyType = "Ready"
)

// PivotSpecInput configures one run of the pivot scenario.
type PivotSpecInput struct {
	// Name tells runs apart in artifacts.
	Name string
	// SSA installs and upgrades with server-side apply (helm-controller's
	// default for installs); false is a client-side-apply release.
	SSA bool
	// Locked makes the pivot also change the Metal3DataTemplate metaData
	// (the image server IP), which CAPM3 refuses to modify.
	Locked bool
	// LockedPool adds a pool whose locked machine template the pivot
	// drifts: its correction rolls Machines, and waits for an approval.
	LockedPool bool
	// Lockdown installs the add-on's chart with defaultServiceAccount set:
	// its own role then reads no Secret and writes no template, and every
	// pass reads and writes as the tenant's ServiceAccount.
	Lockdown bool
}

// pivotRun is the state of one run.
type pivotRun struct {
	in         PivotSpecInput
	boot, mgmt *testenv.Env
	bootFlux   *framework.Flux
	mgmtFlux   *framework.Flux
	addon      *framework.Addon
	receiver   *framework.EventReceiver
	key        client.ObjectKey
}

// PivotSpec is the user's story end to end: Flux installs the cluster chart
// on a bootstrap cluster, `clusterctl move` pivots the CAPI objects to the
// management cluster, Flux installs the same HelmRelease there with the
// management image server, and the add-on heals what Helm left behind, in
// a way a later upgrade keeps.
func PivotSpec(ctx context.Context, inputGetter func() PivotSpecInput) {
	var r pivotRun

	BeforeEach(func() {
		r = pivotRun{in: inputGetter(), key: client.ObjectKey{Namespace: ns, Name: "cluster"}}
		var err error
		for _, c := range []struct {
			name string
			env  **testenv.Env
		}{{"bootstrap", &r.boot}, {"management", &r.mgmt}} {
			*c.env, err = testenv.StartWith(r.in.Name+"-"+c.name, testenv.Options{
				ExtraCRDDirs: []string{suite.bins.SourceCRDs, suite.bins.NotificationCRDs}, Managers: true})
			Expect(err).NotTo(HaveOccurred())
			Expect(move.InstallProviders(ctx, (*c.env).Client)).To(Succeed())
			for _, n := range []string{ns, "flux-system"} {
				Expect((*c.env).Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n}})).To(Succeed())
			}
		}
	})

	AfterEach(func() {
		r.addon.Stop()
		var procs []*framework.Process
		if r.addon != nil {
			procs = append(procs, r.addon.Process)
		}
		for _, f := range []*framework.Flux{r.bootFlux, r.mgmtFlux} {
			f.Stop()
			procs = append(procs, f.Processes()...)
		}
		r.receiver.Close()
		for _, p := range procs {
			if CurrentSpecReport().Failed() {
				fmt.Fprintf(GinkgoWriter, "\n===== %s log (%s) =====\n%s\n", p.Name, p.LogPath, tail(p.Logs(), 150))
			}
		}
		for _, e := range []*testenv.Env{r.boot, r.mgmt} {
			Expect(e.Stop()).To(Succeed())
		}
	})

	It("heals the pivoted templates in the way that sticks", func() {
		r.installOnBootstrap(ctx)
		r.pivot(ctx)
		r.installOnManagement(ctx)
		r.heal(ctx)
		r.upgrade(ctx)
		r.expectAddonRefusedNothing()
		// The preview's last two rows, each a change that fails or rolls
		// for real: once each, in the runs without a locked template.
		switch {
		case r.in.Locked:
		case r.in.SSA:
			r.previewVersionBump(ctx)
		default:
			r.previewThenFail(ctx)
		}
	})
}

func (r *pivotRun) values(url, ip, maxPods string) framework.ClusterValues {
	return framework.ClusterValues{ImageURL: url, ImageServerIP: ip, KubeletMaxPods: maxPods, LockedPool: r.in.LockedPool}
}

// mgmtIP is the image server IP the management release renders.
func (r *pivotRun) mgmtIP() string {
	if r.in.Locked {
		return mgmtIP
	}
	return bootIP
}

func (r *pivotRun) installOnBootstrap(ctx context.Context) {
	By("installing the cluster chart on the bootstrap cluster, with the bootstrap image server")
	var err error
	r.bootFlux, err = framework.StartFlux(r.in.Name+"-bootstrap", r.boot, suite.bins, suite.artifacts)
	Expect(err).NotTo(HaveOccurred())
	c := r.boot.Client
	Expect(framework.CreateHelmRepository(ctx, c, ns, suite.repo.URL)).To(Succeed())
	Expect(framework.CreateValuesConfigMap(ctx, c, ns)).To(Succeed())
	Expect(c.Create(ctx, framework.NewClusterHelmRelease(ns, r.values(bootURL, bootIP, ""), r.in.SSA))).To(Succeed())
	Eventually(func() metav1.ConditionStatus { return status(ctx, c, r.key, readyType) }).Should(Equal(metav1.ConditionTrue))
}

func (r *pivotRun) pivot(ctx context.Context) {
	By("the real Cluster API and Metal3 controllers adopt the objects; provisioning is played (no hosts here), then clusterctl move pivots")
	Expect(move.PlayProvisioning(ctx, r.boot.Client, ns, "mgmt")).To(Succeed())
	Expect(move.RunProvisioned(ctx, r.boot.Client, r.boot.KubeConfigPath, r.mgmt.KubeConfigPath, ns)).To(Succeed())
	r.expectMoved(ctx)
	m3mts, err := framework.List(ctx, r.mgmt.Client, infra, "Metal3MachineTemplate", ns)
	Expect(err).NotTo(HaveOccurred())
	Expect(m3mts).To(HaveLen(2), "the templates moved")
	claims, err := framework.List(ctx, r.mgmt.Client, infra, "Metal3DataClaim", ns)
	Expect(err).NotTo(HaveOccurred())
	Expect(claims).NotTo(BeEmpty(), "each Metal3Machine's claim moved with it")
	for _, m := range m3mts {
		Expect(imageURL(&m)).To(Equal(bootURL))
		Expect(m.GetAnnotations()).To(HaveKeyWithValue(api.HelmReleaseNameAnnotation, "cluster"), "labels and annotations moved")
	}
	secrets := &corev1.SecretList{}
	Expect(r.mgmt.Client.List(ctx, secrets, client.InNamespace(ns))).To(Succeed())
	// The cluster's own Secrets (KCP's certificates and kubeconfig) move
	// with it; Helm's release storage does not.
	Expect(secrets.Items).NotTo(ContainElement(HaveField("Type", corev1.SecretType("helm.sh/release.v1"))), "Helm's release Secret is not moved")

	By("stopping the bootstrap cluster")
	r.bootFlux.Stop()
	Expect(r.boot.Stop()).To(Succeed())
}

// expectMoved checks what clusterctl move did with the real controllers on
// both sides: the Cluster is resumed on the management cluster, and the
// Metal3DataTemplates arrive held by CAPM3's finalizer there.
func (r *pivotRun) expectMoved(ctx context.Context) {
	c := r.mgmt.Client
	cl, err := framework.Get(ctx, c, "cluster.x-k8s.io/v1beta2", "Cluster", ns, "mgmt")
	Expect(err).NotTo(HaveOccurred())
	paused, _, _ := unstructured.NestedBool(cl.Object, "spec", "paused")
	Expect(paused).To(BeFalse(), "move resumes the Cluster on the target")
	Eventually(func() []string {
		var out []string
		m3dts, _ := framework.List(ctx, c, infra, "Metal3DataTemplate", ns)
		for _, dt := range m3dts {
			if len(dt.GetFinalizers()) > 0 {
				out = append(out, dt.GetName())
			}
		}
		return out
	}).Should(HaveLen(2), "CAPM3 holds both Metal3DataTemplates on the management cluster")
}

func (r *pivotRun) installOnManagement(ctx context.Context) {
	By("installing the same HelmRelease on the management cluster, with the management image server")
	var err error
	r.mgmtFlux, err = framework.StartFlux(r.in.Name+"-management", r.mgmt, suite.bins, suite.artifacts)
	Expect(err).NotTo(HaveOccurred())
	c := r.mgmt.Client
	r.startReceiver(ctx)
	Expect(framework.CreateHelmRepository(ctx, c, ns, suite.repo.URL)).To(Succeed())
	// clusterctl moves Cluster API objects and the Secrets they own, not
	// the valuesFrom ConfigMap.
	Expect(framework.CreateValuesConfigMap(ctx, c, ns)).To(Succeed())
	Expect(c.Create(ctx, framework.NewClusterHelmRelease(ns, r.values(mgmtURL, r.mgmtIP(), ""), r.in.SSA))).To(Succeed())
	Eventually(func() bool {
		cond, hr, _ := framework.Condition(ctx, c, r.key, readyType)
		return cond != nil && hr.Status.History.Latest() != nil &&
			(cond.Reason == "InstallSucceeded" || cond.Reason == "InstallFailed" || cond.Reason == "UpgradeSucceeded" || cond.Reason == "UpgradeFailed")
	}).Should(BeTrue(), "helm-controller finished the install")
	cond, _, err := framework.Condition(ctx, c, r.key, readyType)
	Expect(err).NotTo(HaveOccurred())
	r.observe(ctx, "after the management install", cond)
	r.expectHelmControllerForwarded()
	m3mts, err := framework.List(ctx, c, infra, "Metal3MachineTemplate", ns)
	Expect(err).NotTo(HaveOccurred())
	for _, m := range m3mts {
		// Measured with helm-controller v1.6.4 (Helm 4): adoption at install
		// patches the mutable templates, with client-side and server-side
		// apply alike, so the image URL is already the management one.
		Expect(imageURL(&m)).To(Equal(mgmtURL), "helm-controller v1.6.4's install patched the adopted template")
	}
	if r.in.Locked {
		// ...but a drifted locked template makes the install fail, in both modes.
		Expect(cond.Status).To(Equal(metav1.ConditionFalse))
		Expect(cond.Reason).To(Equal("InstallFailed"))
		Expect(cond.Message).To(ContainSubstring("cannot be modified"))
		return
	}
	Expect(cond.Status).To(Equal(metav1.ConditionTrue))
	r.expectFaithfulRender(ctx)
	r.driftSurvivesUpgrade(ctx)
}

// driftSurvivesUpgrade shows where mutable drift persists with helm-controller
// v1.6.4: a template whose rendered manifest does not change between two
// releases is not patched by a client-side-apply upgrade, so drift that
// appears after the install (a restore from a pre-pivot backup, a second
// move) stays. A server-side-apply upgrade re-applies every object.
func (r *pivotRun) driftSurvivesUpgrade(ctx context.Context) {
	c := r.mgmt.Client
	By("drift appears after the install (as a restore of the pre-pivot objects would bring it back), then Flux upgrades")
	m3mts, err := framework.List(ctx, c, infra, "Metal3MachineTemplate", ns)
	Expect(err).NotTo(HaveOccurred())
	for i := range m3mts {
		m := &m3mts[i]
		Expect(unstructured.SetNestedField(m.Object, bootURL, "spec", "template", "spec", "image", "url")).To(Succeed())
		Expect(c.Update(ctx, m)).To(Succeed())
	}
	r.previewDriftThroughUpgrade(ctx, "150")
	r.upgradeTo(ctx, "150")
	m3mts, err = framework.List(ctx, c, infra, "Metal3MachineTemplate", ns)
	Expect(err).NotTo(HaveOccurred())
	want := bootURL
	if r.in.SSA {
		want = mgmtURL
	}
	for _, m := range m3mts {
		Expect(imageURL(&m)).To(Equal(want), "after a %s upgrade", map[bool]string{true: "server-side-apply", false: "client-side-apply"}[r.in.SSA])
	}
	cond, _, _ := framework.Condition(ctx, c, r.key, readyType)
	r.observe(ctx, "after an upgrade over drift", cond)
}

func (r *pivotRun) heal(ctx context.Context) {
	c := r.mgmt.Client
	refsBefore := r.refs(ctx)
	dataTemplatesBefore := r.uids(ctx, "Metal3DataTemplate")
	if os.Getenv("E2E_WITHOUT_ADDON") == "1" {
		// Negative control: the add-on steps must fail without the add-on.
		fmt.Fprintln(GinkgoWriter, "E2E_WITHOUT_ADDON=1: the add-on is not started")
	} else {
		r.startAddon(ctx)
	}
	By("opting in")
	hr := framework.NewClusterHelmRelease(ns, framework.ClusterValues{}, r.in.SSA)
	Expect(c.Get(ctx, r.key, hr)).To(Succeed())
	base := hr.DeepCopy()
	hr.SetAnnotations(map[string]string{api.ModeAnnotation: api.ModeEnabled})
	Expect(c.Patch(ctx, hr, client.MergeFrom(base))).To(Succeed())

	By("the templates carry the management image server, every MachineDeployment and control plane reference unchanged")
	Eventually(func() []string {
		m3mts, _ := framework.List(ctx, c, infra, "Metal3MachineTemplate", ns)
		var urls []string
		for _, m := range m3mts {
			urls = append(urls, imageURL(&m))
		}
		return urls
	}).Should(ConsistOf(mgmtURL, mgmtURL))
	wantReason := api.DriftCorrectedReason
	if r.in.SSA && !r.in.Locked {
		wantReason = api.NoDriftDetectedReason // the SSA upgrade already re-applied the templates
	}
	if r.in.SSA && r.in.Locked {
		r.blockedThenWayOut(ctx, dataTemplatesBefore)
	}
	if r.in.LockedPool {
		r.approveThenRoll(ctx)
	}
	Eventually(func() string { return reason(ctx, c, r.key, api.TemplatesInSyncCondition) }).Should(Equal(wantReason))
	if r.in.Locked {
		r.expectLockedHealed(ctx)
	}
	Expect(r.refs(ctx)).To(Equal(refsBefore), "no rollout")
	cond, _, err := framework.Condition(ctx, c, r.key, api.TemplatesInSyncCondition)
	Expect(err).NotTo(HaveOccurred())
	fmt.Fprintf(GinkgoWriter, "OBSERVED TemplatesInSync (%s): %s/%s: %s\n", r.in.Name, cond.Status, cond.Reason, cond.Message)
	Expect(cond.Status).To(Equal(metav1.ConditionTrue))

	if !r.in.Locked {
		Expect(cond.Message).NotTo(ContainSubstring("rotate"), "mutable templates are corrected in place")
	}
	if cond.Reason == api.DriftCorrectedReason {
		By("flux events lists the add-on's events")
		out, err := framework.FluxCLI(ctx, suite.bins.Flux, r.mgmt.KubeConfigPath, "events", "-n", ns, "--for", "HelmRelease/cluster")
		Expect(err).NotTo(HaveOccurred())
		fmt.Fprintf(GinkgoWriter, "$ flux events -n %s --for HelmRelease/cluster\n%s\n", ns, out)
		_ = os.WriteFile(suite.artifacts+"/"+r.in.Name+"-flux-events.txt", []byte(out), 0o644)
		Expect(out).To(ContainSubstring(api.TemplateDriftCorrectedEvent))
		r.expectForwarded(ctx, api.TemplateDriftCorrectedEvent)
	}
	r.reconcileWithFlux(ctx)
}

// reconcileWithFlux runs `flux reconcile helmrelease cluster --force`: the
// failed or adopted release is applied again, and TemplatesInSync survives
// helm-controller's status writes.
func (r *pivotRun) reconcileWithFlux(ctx context.Context) {
	c := r.mgmt.Client
	By("flux reconcile --force: the failed or adopted release is applied again, and the condition survives")
	out, err := framework.FluxCLI(ctx, suite.bins.Flux, r.mgmt.KubeConfigPath, "reconcile", "helmrelease", "cluster", "-n", ns, "--force")
	fmt.Fprintf(GinkgoWriter, "$ flux reconcile helmrelease cluster --force\n%s\n", out)
	Expect(err).NotTo(HaveOccurred(), "after healing, helm-controller's retry passes")
	Eventually(func() metav1.ConditionStatus { return status(ctx, c, r.key, readyType) }).Should(Equal(metav1.ConditionTrue))
	// helm-controller stores the new release before it records it in
	// status.history; a pass between the two waits (Unknown,
	// ReleaseInProgress) and the next one, on the history write, concludes.
	inSync := func() metav1.ConditionStatus { return status(ctx, c, r.key, api.TemplatesInSyncCondition) }
	Eventually(inSync).Should(Equal(metav1.ConditionTrue))
	Consistently(inSync, "3s").Should(Equal(metav1.ConditionTrue))
	out, err = framework.FluxCLI(ctx, suite.bins.Flux, r.mgmt.KubeConfigPath, "get", "helmreleases", "-n", ns)
	Expect(err).NotTo(HaveOccurred())
	fmt.Fprintf(GinkgoWriter, "$ flux get helmreleases -n %s\n%s\n", ns, out)
}

// upgradeTo changes the kubelet max-pods value and waits for the Helm
// upgrade to succeed.
func (r *pivotRun) upgradeTo(ctx context.Context, maxPods string) {
	c := r.mgmt.Client
	_, hr, err := framework.Condition(ctx, c, r.key, readyType)
	Expect(err).NotTo(HaveOccurred())
	version := hr.Status.History.Latest().Version
	Expect(framework.SetValues(ctx, c, r.key, r.values(mgmtURL, r.mgmtIP(), maxPods))).To(Succeed())
	Eventually(func() bool {
		cond, hr, err := framework.Condition(ctx, c, r.key, readyType)
		return err == nil && cond != nil && cond.Status == metav1.ConditionTrue &&
			hr.Status.History.Latest().Version > version && cond.ObservedGeneration == hr.Generation
	}).Should(BeTrue(), "the Helm upgrade succeeds")
}

func (r *pivotRun) upgrade(ctx context.Context) {
	c := r.mgmt.Client
	By("upgrading after healing: a kubelet argument changes, so the KubeadmConfigTemplate gets a new name")
	refsBefore := r.refs(ctx)
	v := r.values(mgmtURL, r.mgmtIP(), "200")
	run := r.preview(ctx, "kubelet-200", &v)
	mds := run.objects("MachineDeployment")
	Expect(mds).To(HaveEach(HaveField("Rolls", true)), "the preview: the MachineDeployments roll")
	Expect(run.objects("KubeadmConfigTemplate")).To(ContainElement(And(HaveField("Name", refsBefore["md.configRef"]),
		HaveField("Change", preview.ChangeDelete))), "the preview: the old bootstrap template is deleted")
	r.upgradeTo(ctx, "200")
	refs := r.refs(ctx)
	Expect(refs["md.configRef"]).NotTo(Equal(refsBefore["md.configRef"]), "the MachineDeployment references the new bootstrap template")
	Eventually(func() []string { return r.machineSetConfigRefs(ctx) }).Should(ContainElement(refs["md.configRef"]),
		"as predicted, the MachineDeployment rolls: a new MachineSet")
	_, err := framework.Get(ctx, c, "bootstrap.cluster.x-k8s.io/v1beta2", "KubeadmConfigTemplate", ns, refsBefore["md.configRef"])
	Expect(apierrors.IsNotFound(err)).To(BeTrue(), "as predicted, Helm deleted the old bootstrap template: %v", err)
	m3mt, err := framework.Get(ctx, c, infra, "Metal3MachineTemplate", ns, refs["md.infrastructureRef"])
	Expect(err).NotTo(HaveOccurred())
	Expect(imageURL(m3mt)).To(Equal(mgmtURL), "and a healed infrastructure template")
	cond, _, _ := framework.Condition(ctx, c, r.key, readyType)
	r.observe(ctx, "after the upgrade", cond)
}
