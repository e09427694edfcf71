//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/go-logr/logr"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	helmv1 "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage"
	"helm.sh/helm/v4/pkg/storage/driver"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/templatedrift/template-drift-controller/e2e/framework"
	"github.com/templatedrift/template-drift-controller/internal/plan"
	"github.com/templatedrift/template-drift-controller/internal/preview"
	"github.com/templatedrift/template-drift-controller/internal/render"
)

// previewRun is one run of `templatedrift preview` on the
// management cluster: its reports (-o json) and exit code.
type previewRun struct {
	reports []preview.Report
	code    int
}

// objects returns the report's objects of kind.
func (p previewRun) objects(kind string) []preview.Object {
	var out []preview.Object
	for _, r := range p.reports {
		for _, o := range r.Objects {
			if o.Kind == kind {
				out = append(out, o)
			}
		}
	}
	return out
}

// preview runs the preview command of the add-on's CLI, as an operator
// would before merging: with the HelmRelease as proposed in the
// pull request (--helmrelease) when v is set, else with the HelmRelease as
// it is; --fail-on change, so that any predicted change exits 1.
func (r *pivotRun) preview(ctx context.Context, step string, v *framework.ClusterValues) previewRun {
	args := []string{"preview", "-n", ns, "cluster", "--kubeconfig", r.mgmt.KubeConfigPath, "-o", "json", "--fail-on", "change"}
	if v != nil {
		hr := framework.NewClusterHelmRelease(ns, *v, r.in.SSA)
		Expect(r.mgmt.Client.Get(ctx, r.key, hr)).To(Succeed())
		hr.Spec.Values = framework.NewClusterHelmRelease(ns, *v, r.in.SSA).Spec.Values
		hr.Status, hr.ManagedFields = helmv2.HelmReleaseStatus{}, nil
		hr.APIVersion, hr.Kind = helmv2.GroupVersion.String(), helmv2.HelmReleaseKind
		data, err := yaml.Marshal(hr)
		Expect(err).NotTo(HaveOccurred())
		file := filepath.Join(suite.artifacts, r.in.Name+"-"+step+"-proposed.yaml")
		Expect(os.WriteFile(file, data, 0o644)).To(Succeed())
		args = append(args, "--helmrelease", file)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, suite.bins.CLI, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	run := previewRun{}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		run.code = exit.ExitCode()
	case err != nil:
		Fail(fmt.Sprintf("preview: %v", err))
	}
	_ = os.WriteFile(filepath.Join(suite.artifacts, r.in.Name+"-"+step+"-preview.json"), stdout.Bytes(), 0o644)
	fmt.Fprintf(GinkgoWriter, "$ template-drift-controller %v (exit %d)\n%s%s\n", args[:5], run.code, stdout.String(), stderr.String())
	Expect(run.code).NotTo(Equal(preview.ExitError), "the preview ran: %s", stderr.String())
	var doc struct {
		Releases []preview.Report `json:"releases"`
	}
	Expect(json.Unmarshal(stdout.Bytes(), &doc)).To(Succeed())
	Expect(doc.Releases).To(HaveLen(1))
	run.reports = doc.Releases
	return run
}

// expectFaithfulRender checks that the preview renders as helm-controller
// does: the HelmRelease as it is previews as no change, and rendering it
// (valuesFrom, post-renderer and all) gives exactly the manifest
// helm-controller stored for the release it made.
func (r *pivotRun) expectFaithfulRender(ctx context.Context) {
	By("the preview of the HelmRelease as it is: nothing changes, and its render is helm-controller's")
	run := r.preview(ctx, "as-is", nil)
	Expect(run.reports[0].Changes()).To(BeZero(), "%+v", run.reports[0].Objects)
	Expect(run.code).To(Equal(preview.ExitOK))

	hr := &helmv2.HelmRelease{}
	Expect(r.mgmt.Client.Get(ctx, r.key, hr)).To(Succeed())
	cs, err := kubernetes.NewForConfig(r.mgmt.Config)
	Expect(err).NotTo(HaveOccurred())
	last, err := storage.Init(driver.NewSecrets(cs.CoreV1().Secrets(ns))).Last("cluster")
	Expect(err).NotTo(HaveOccurred())
	stored := last.(*helmv1.Release)
	values, err := render.Values(ctx, logr.Discard(), r.mgmt.Client, hr)
	Expect(err).NotTo(HaveOccurred())
	out, err := render.Render(ctx, render.Request{HelmRelease: hr, Chart: stored.Chart, Values: values, Target: r.mgmt.Config})
	Expect(err).NotTo(HaveOccurred())
	Expect(out.Manifest).To(Equal(stored.Manifest), "the render equals helm-controller's")
	Expect(stored.Manifest).To(ContainSubstring("e2e.templatedrift.io/post-rendered"), "with its post-renderer")
}

// previewDriftThroughUpgrade previews the upgrade to maxPods over drifted
// machine templates and checks what the preview says of their drift: a
// client-side-apply upgrade leaves it (the templates' manifest does not
// change) and the add-on then corrects them in place; a server-side-apply
// upgrade heals it. The caller then upgrades and checks the same.
func (r *pivotRun) previewDriftThroughUpgrade(ctx context.Context, maxPods string) {
	By("the preview of an unrelated change over drifted machine templates says what becomes of the drift")
	v := r.values(mgmtURL, r.mgmtIP(), maxPods)
	run := r.preview(ctx, "drifted-"+maxPods, &v)
	m3mts := run.objects("Metal3MachineTemplate")
	Expect(m3mts).To(HaveLen(2))
	for _, o := range m3mts {
		Expect(o.Drift).NotTo(BeNil(), o.Name)
		Expect(o.Drift.Today).To(Equal(string(plan.OutcomeDrifted)), o.Name)
		if r.in.SSA {
			Expect(o.Drift.Fate).To(Equal(string(plan.DriftHealed)), o.Name)
			continue
		}
		Expect(o.Drift.Fate).To(Equal(string(plan.DriftStays)), o.Name)
		Expect(o.Drift.Addon).To(ContainSubstring("would "+string(plan.StrategyInPlace)), o.Name)
	}
}

// machineSetConfigRefs lists the bootstrap template each MachineSet of the
// namespace clones from.
func (r *pivotRun) machineSetConfigRefs(ctx context.Context) []string {
	mss, err := framework.List(ctx, r.mgmt.Client, "cluster.x-k8s.io/v1beta2", "MachineSet", ns)
	Expect(err).NotTo(HaveOccurred())
	var out []string
	for _, ms := range mss {
		name, _, _ := unstructured.NestedString(ms.Object, "spec", "template", "spec", "bootstrap", "configRef", "name")
		out = append(out, name)
	}
	return out
}

// previewThenFail previews a change of the locked Metal3DataTemplate
// metaData under the same name, then makes it: the preview says the
// upgrade fails with CAPM3's message, and helm-controller's upgrade fails
// with it.
func (r *pivotRun) previewThenFail(ctx context.Context) {
	By("a locked metaData change under the same name: the preview says the upgrade fails, and helm-controller's fails with the webhook's message")
	v := r.values(mgmtURL, "192.168.100.9", "200")
	run := r.preview(ctx, "locked", &v)
	Expect(run.code).To(Equal(preview.ExitFound))
	var words []string
	for _, o := range run.objects("Metal3DataTemplate") {
		if o.Fails {
			words = append(words, webhookWords(o.Message))
		}
	}
	Expect(words).NotTo(BeEmpty(), "the preview names the refusal")
	Expect(framework.SetValues(ctx, r.mgmt.Client, r.key, v)).To(Succeed())
	Eventually(func() string {
		cond, hr, err := framework.Condition(ctx, r.mgmt.Client, r.key, readyType)
		if err != nil || cond == nil || cond.ObservedGeneration != hr.Generation {
			return ""
		}
		return cond.Reason + ": " + cond.Message
	}).Should(And(HavePrefix("UpgradeFailed"), ContainSubstring(words[0])), "as predicted")
}

// webhookWords is a refusal's own words: what follows the last "denied
// the request: ", which every error that carries it repeats.
func webhookWords(message string) string {
	const marker = "denied the request: "
	if i := strings.LastIndex(message, marker); i >= 0 {
		return message[i+len(marker):]
	}
	return message
}

// previewVersionBump previews a Kubernetes version bump, then makes it:
// the preview says the KubeadmControlPlane rolls its Machines, and the real
// KubeadmControlPlane controller marks that many of them not up to date.
func (r *pivotRun) previewVersionBump(ctx context.Context) {
	By("a Kubernetes version bump: the preview says the control plane rolls N Machines, and KCP marks N Machines not up to date")
	v := r.values(mgmtURL, r.mgmtIP(), "200")
	v.KubernetesVersion = "v1.34.1"
	run := r.preview(ctx, "version", &v)
	kcps := run.objects("KubeadmControlPlane")
	Expect(kcps).To(ConsistOf(And(HaveField("Rolls", true), HaveField("Machines", HaveValue(BeNumerically(">", 0))))))
	Expect(framework.SetValues(ctx, r.mgmt.Client, r.key, v)).To(Succeed())
	Eventually(func() int { return r.controlPlaneMachinesNotUpToDate(ctx) }).Should(BeEquivalentTo(*kcps[0].Machines), "as predicted")
}

// controlPlaneMachinesNotUpToDate counts the control plane's Machines whose
// UpToDate condition is False.
func (r *pivotRun) controlPlaneMachinesNotUpToDate(ctx context.Context) int {
	machines, err := framework.List(ctx, r.mgmt.Client, "cluster.x-k8s.io/v1beta2", "Machine", ns)
	Expect(err).NotTo(HaveOccurred())
	n := 0
	for _, m := range machines {
		if _, cp := m.GetLabels()["cluster.x-k8s.io/control-plane"]; !cp {
			continue
		}
		conds, _, _ := unstructured.NestedSlice(m.Object, "status", "conditions")
		for _, c := range conds {
			if c, ok := c.(map[string]any); ok && c["type"] == "UpToDate" && c["status"] == "False" {
				n++
			}
		}
	}
	return n
}
