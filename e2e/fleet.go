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
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/apis/meta"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/e2e/framework"
	"github.com/templatedrift/template-drift-controller/internal/preview"
	"github.com/templatedrift/template-drift-controller/internal/testenv"
)

// The preview identity of the fleet spec: a CI job's ServiceAccount.
const (
	previewSA   = "templatedrift-preview"
	previewUser = "system:serviceaccount:flux-system:" + previewSA
)

// fleetRun is the state of the fleet-repository spec.
type fleetRun struct {
	env  *testenv.Env
	flux *framework.Flux
	// checkout is the pull request's working copy of the fleet repository.
	checkout string
	// kubeconfig is the preview identity's.
	kubeconfig string
	url        string
}

// The fleet repository as a CI job on a pull request sees it: previewed
// with --kustomization as the preview identity, whose real writes the
// chart's policy refuses; then merged, applied by the real
// kustomize-controller and helm-controller, and the prediction compared
// with what happened.
var _ = Describe("A fleet repository's pull request, previewed in CI, then applied by Flux", func() {
	var r fleetRun
	ctx := context.Background()

	BeforeEach(func() {
		r = fleetRun{}
		var err error
		r.env, err = testenv.StartWith("fleet", testenv.Options{
			ExtraCRDDirs: []string{suite.bins.SourceCRDs, suite.bins.NotificationCRDs}, Managers: true})
		Expect(err).NotTo(HaveOccurred())
		for _, n := range []string{ns, "flux-system"} {
			Expect(r.env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n}})).To(Succeed())
		}
		r.flux, err = framework.StartFlux("fleet", r.env, suite.bins, suite.artifacts)
		Expect(err).NotTo(HaveOccurred())
		Expect(r.flux.StartKustomize("fleet", r.env, suite.bins, suite.artifacts)).To(Succeed())
	})

	AfterEach(func() {
		r.flux.Stop()
		for _, p := range r.flux.Processes() {
			if CurrentSpecReport().Failed() {
				fmt.Fprintf(GinkgoWriter, "\n===== %s log (%s) =====\n%s\n", p.Name, p.LogPath, tail(p.Logs(), 150))
			}
		}
		Expect(r.env.Stop()).To(Succeed())
	})

	It("predicts what Flux then does", func() {
		r.applyMain(ctx)
		r.previewIdentity(ctx)

		By("the pull request raises the workers' max-pods in the overlay's generated values file")
		values := filepath.Join(r.checkout, "clusters", "mgmt", "values.yaml")
		Expect(os.WriteFile(values, []byte("cluster: mgmt\nkubeletArgs:\n  max-pods: \"200\"\n"), 0o644)).To(Succeed())
		rep := r.preview(ctx)
		predicted := expectRollout(rep)

		By("the pull request merges: kustomize-controller applies it, helm-controller upgrades")
		r.push(ctx)
		Eventually(func(g Gomega) {
			hr := &helmv2.HelmRelease{}
			g.Expect(r.env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cluster"}, hr)).To(Succeed())
			g.Expect(hr.Status.History.Latest()).NotTo(BeNil())
			g.Expect(hr.Status.History.Latest().Version).To(Equal(2))
			g.Expect(status(ctx, r.env.Client, client.ObjectKeyFromObject(hr), readyType)).To(Equal(metav1.ConditionTrue))
		}).WithTimeout(3 * time.Minute).Should(Succeed())
		r.expectAsPredicted(ctx, predicted)
	})
})

// applyMain publishes the fleet repository's main branch and lets Flux
// install it: an OCIRepository, the Kustomization with its postBuild
// substitutions, and the cluster HelmRelease it builds.
func (r *fleetRun) applyMain(ctx context.Context) {
	By("Flux applies the fleet repository's main branch")
	root, err := testenv.RepoRoot()
	Expect(err).NotTo(HaveOccurred())
	r.checkout = filepath.Join(GinkgoT().TempDir(), "fleet")
	Expect(framework.CopyDir(filepath.Join(root, "e2e", "testdata", "fleet"), r.checkout)).To(Succeed())
	r.push(ctx)
	c := r.env.Client
	Expect(c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "flux-system", Name: "cluster-vars"},
		Data: map[string]string{"chart_repository": suite.repo.URL}})).To(Succeed())
	repo := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "OCIRepository",
		"metadata": map[string]any{"name": "fleet", "namespace": "flux-system"},
		"spec":     map[string]any{"url": r.url, "ref": map[string]any{"tag": "main"}, "insecure": true, "interval": "1m"},
	}}
	Expect(c.Create(ctx, repo)).To(Succeed())
	ks := &kustomizev1.Kustomization{
		ObjectMeta: metav1.ObjectMeta{Namespace: "flux-system", Name: "fleet"},
		Spec: kustomizev1.KustomizationSpec{Interval: metav1.Duration{Duration: time.Minute}, Path: "./clusters/mgmt", Prune: true,
			SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: "OCIRepository", Name: "fleet"},
			PostBuild: &kustomizev1.PostBuild{
				Substitute:     map[string]string{"image_server": mgmtIP},
				SubstituteFrom: []kustomizev1.SubstituteReference{{Kind: "ConfigMap", Name: "cluster-vars"}}}},
	}
	Expect(c.Create(ctx, ks)).To(Succeed())
	Eventually(func() metav1.ConditionStatus {
		return status(ctx, c, client.ObjectKey{Namespace: ns, Name: "cluster"}, readyType)
	}).WithTimeout(3*time.Minute).Should(Equal(metav1.ConditionTrue), "kustomize-controller applied the HelmRelease, helm-controller installed it")
}

// push publishes the checkout as the main branch and asks source-controller
// to fetch it now.
func (r *fleetRun) push(ctx context.Context) {
	var err error
	r.url, err = suite.registry.PushFleet(ctx, suite.bins.Flux, r.env.KubeConfigPath, r.checkout, "main")
	Expect(err).NotTo(HaveOccurred())
	repo := &unstructured.Unstructured{}
	repo.SetAPIVersion("source.toolkit.fluxcd.io/v1")
	repo.SetKind("OCIRepository")
	repo.SetNamespace("flux-system")
	repo.SetName("fleet")
	patch := fmt.Sprintf(`{"metadata": {"annotations": {%q: %q}}}`, meta.ReconcileRequestAnnotation, time.Now().Format(time.RFC3339Nano))
	err = r.env.Client.Patch(ctx, repo, client.RawPatch(types.MergePatchType, []byte(patch)))
	if !apierrors.IsNotFound(err) {
		Expect(err).NotTo(HaveOccurred())
	}
}

// previewIdentity makes the CI job's identity as docs/preview-ci.md says:
// a ServiceAccount bound to the chart's preview ClusterRole where it reads,
// held to dry-runs by the chart's policy; and checks that the policy holds.
func (r *fleetRun) previewIdentity(ctx context.Context) {
	By("the CI job's identity: the chart's preview role, and its policy holding the identity to dry-runs")
	root, err := testenv.RepoRoot()
	Expect(err).NotTo(HaveOccurred())
	objs, err := framework.RenderedObjects(filepath.Join(root, "charts", "template-drift-controller"), map[string]any{
		"preview": map[string]any{"clusterRole": map[string]any{"create": true},
			"dryRunOnly": map[string]any{"enabled": true, "users": []any{previewUser}}},
	}, "ClusterRole", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding")
	Expect(err).NotTo(HaveOccurred())
	c := r.env.Client
	role := ""
	for _, o := range objs {
		if o.GetKind() == "ClusterRole" && !strings.HasSuffix(o.GetName(), "-preview") {
			continue
		}
		if o.GetKind() == "ClusterRole" {
			role = o.GetName()
		}
		Expect(c.Create(ctx, o)).To(Succeed())
	}
	Expect(role).NotTo(BeEmpty())
	Expect(c.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "flux-system", Name: previewSA}})).To(Succeed())
	for _, n := range []string{ns, "flux-system"} {
		Expect(c.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: n, Name: previewSA},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "flux-system", Name: previewSA}}})).To(Succeed())
	}
	r.kubeconfig = filepath.Join(GinkgoT().TempDir(), "preview.kubeconfig")
	cfg, err := framework.ServiceAccountKubeConfig(ctx, r.env.Config, "flux-system", previewSA, r.kubeconfig)
	Expect(err).NotTo(HaveOccurred())
	as, err := client.New(cfg, client.Options{Scheme: testenv.Scheme()})
	Expect(err).NotTo(HaveOccurred())
	md := &unstructured.Unstructured{}
	md.SetAPIVersion("cluster.x-k8s.io/v1beta2")
	md.SetKind("MachineDeployment")
	md.SetNamespace(ns)
	md.SetName("mgmt-md0")
	write := client.RawPatch(types.MergePatchType, []byte(`{"metadata": {"labels": {"written": "for-real"}}}`))
	Eventually(func() error { return as.Patch(ctx, md.DeepCopy(), write) }).Should(
		MatchError(ContainSubstring("the preview identity "+previewUser+" may only send dry-runs")), "a real write by the CI identity is refused")
}

// preview runs `templatedrift preview --kustomization` from the checkout
// as the CI job does, as the preview identity: JSON, then markdown.
func (r *fleetRun) preview(ctx context.Context) preview.Report {
	By("the CI job previews the pull request with --kustomization, as the preview identity")
	run := func(output string) (int, []byte) {
		args := []string{"preview", "--kubeconfig", r.kubeconfig, "--kustomization", "flux-system/fleet", "--fail-on", "rollout", "-o", output}
		var stdout, stderr bytes.Buffer
		cmd := exec.CommandContext(ctx, suite.bins.CLI, args...)
		cmd.Dir, cmd.Stdout, cmd.Stderr = r.checkout, &stdout, &stderr
		err := cmd.Run()
		code := 0
		var exit *exec.ExitError
		switch {
		case errors.As(err, &exit):
			code = exit.ExitCode()
		case err != nil:
			Fail(fmt.Sprintf("preview: %v", err))
		}
		_ = os.WriteFile(filepath.Join(suite.artifacts, "fleet-preview."+output), stdout.Bytes(), 0o644)
		fmt.Fprintf(GinkgoWriter, "$ templatedrift %v (exit %d)\n%s%s\n", args, code, stdout.String(), stderr.String())
		Expect(code).NotTo(Equal(preview.ExitError), stderr.String())
		return code, stdout.Bytes()
	}
	code, out := run("json")
	Expect(code).To(Equal(preview.ExitFound), "--fail-on rollout: the change rolls Machines")
	var doc struct {
		Version  int              `json:"version"`
		Releases []preview.Report `json:"releases"`
	}
	Expect(json.Unmarshal(out, &doc)).To(Succeed())
	Expect(doc.Version).To(Equal(preview.SchemaVersion))
	Expect(doc.Releases).To(HaveLen(1))
	Expect(doc.Releases[0].HelmRelease).To(Equal(ns + "/cluster"))
	_, md := run("markdown")
	Expect(string(md)).To(HavePrefix(preview.MarkdownMarker), "the comment a CI step updates")
	Expect(string(md)).To(ContainSubstring("rolls 1 Machine"))
	return doc.Releases[0]
}

// predicted is what the preview said the upgrade does.
type predicted struct {
	created, deleted string
	// configRef is the bootstrap template the MachineDeployment clones
	// from after the upgrade, as the preview's field diff says.
	configRef string
}

// expectRollout checks the preview of the change: the values file
// generated under a new hashed name and substituted reaches the render,
// which renames the KubeadmConfigTemplate and rolls the MachineDeployment,
// and the field diff says which field.
func expectRollout(rep preview.Report) predicted {
	var p predicted
	for _, o := range rep.Objects {
		switch {
		case o.Kind == "KubeadmConfigTemplate" && o.Change == preview.ChangeCreate:
			p.created = o.Name
		case o.Kind == "KubeadmConfigTemplate" && o.Change == preview.ChangeDelete:
			p.deleted = o.Name
		case o.Kind == "MachineDeployment":
			Expect(o.Rolls).To(BeTrue(), "%+v", o)
			Expect(o.Machines).To(HaveValue(BeEquivalentTo(1)))
			for _, c := range o.Changes {
				if c.Path == "/spec/template/spec/bootstrap/configRef/name" {
					p.configRef, _ = c.After.(string)
				}
			}
		}
	}
	Expect(p.created).NotTo(BeEmpty(), "%+v", rep.Objects)
	Expect(p.deleted).NotTo(BeEmpty(), "%+v", rep.Objects)
	Expect(p.configRef).To(Equal(p.created), "the field diff names the new template")
	return p
}

// expectAsPredicted compares what Flux did with the prediction: the new
// template exists, the old is gone, and the MachineDeployment clones from
// the new one, through a new MachineSet (the rollout).
func (r *fleetRun) expectAsPredicted(ctx context.Context, p predicted) {
	By("what Flux did is what the preview said")
	c := r.env.Client
	_, err := framework.Get(ctx, c, "bootstrap.cluster.x-k8s.io/v1beta2", "KubeadmConfigTemplate", ns, p.created)
	Expect(err).NotTo(HaveOccurred(), "the template the preview said the upgrade creates")
	Eventually(func() bool {
		_, err := framework.Get(ctx, c, "bootstrap.cluster.x-k8s.io/v1beta2", "KubeadmConfigTemplate", ns, p.deleted)
		return apierrors.IsNotFound(err)
	}).Should(BeTrue(), "the template the preview said the upgrade deletes")
	md, err := framework.Get(ctx, c, "cluster.x-k8s.io/v1beta2", "MachineDeployment", ns, "mgmt-md0")
	Expect(err).NotTo(HaveOccurred())
	ref, _, _ := unstructured.NestedString(md.Object, "spec", "template", "spec", "bootstrap", "configRef", "name")
	Expect(ref).To(Equal(p.configRef), "the field the preview said changes")
	Eventually(func() []string {
		mss, _ := framework.List(ctx, c, "cluster.x-k8s.io/v1beta2", "MachineSet", ns)
		var refs []string
		for _, ms := range mss {
			name, _, _ := unstructured.NestedString(ms.Object, "spec", "template", "spec", "bootstrap", "configRef", "name")
			refs = append(refs, name)
		}
		return refs
	}).Should(ContainElement(p.created), "Cluster API rolls the MachineDeployment: a MachineSet of the new template")
}
