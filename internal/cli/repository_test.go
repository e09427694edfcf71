package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/templatedrift/template-drift-controller/internal/preview"
	"github.com/templatedrift/template-drift-controller/internal/testenv"
)

// fleetRepository is a fleet repository as Flux users lay one out: a base
// HelmRelease whose values come from a generated ConfigMap (renamed by
// kustomize through Flux's documented nameReference), a production overlay
// that adds a second cluster, and values that postBuild substitutes.
var fleetRepository = map[string]string{
	"clusters/base/kustomization.yaml": `resources: [helmrelease.yaml]
configurations: [kustomizeconfig.yaml]
configMapGenerator:
- name: cluster-values
  files: [values.yaml]
`,
	"clusters/base/kustomizeconfig.yaml": `nameReference:
- kind: ConfigMap
  version: v1
  fieldSpecs:
  - {path: spec/valuesFrom/name, kind: HelmRelease}
`,
	"clusters/base/helmrelease.yaml": `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: cluster}
spec:
  interval: 1m
  releaseName: cluster
  chart: {spec: {chart: cluster, version: 1.0.0, sourceRef: {kind: HelmRepository, name: charts}}}
  valuesFrom:
  - {kind: ConfigMap, name: cluster-values, valuesKey: values.yaml}
`,
	"clusters/base/values.yaml": "kubeletArgs:\n  max-pods: \"${max_pods}\"\n",
	"clusters/prod/kustomization.yaml": `resources: [../base, second.yaml]
`,
	"clusters/prod/second.yaml": `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: second, namespace: preview-repo-new}
spec:
  interval: 1m
  releaseName: second
  chart: {spec: {chart: cluster, version: 1.0.0, sourceRef: {kind: HelmRepository, name: charts}}}
`,
}

// TestPreviewFromRepository previews a fleet repository's folder as
// kustomize-controller would build it for a Flux Kustomization, on a real
// API server with the real Cluster API and Metal3 managers: the values
// file generated under a hashed name and substituted from a Secret reaches
// the render (a rollout, with its fields), a HelmRelease new in the build is
// previewed as an install, and bad input is refused by name.
func TestPreviewFromRepository(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	for _, ns := range []string{"preview-repo", "preview-repo-new"} {
		g.Expect(env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	}
	_, err := testenv.InstallClusterChart(ctx, env, "preview-repo", "csa")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "preview-repo", Name: "cluster-vars"},
		StringData: map[string]string{"max_pods": "200"}})).To(Succeed())
	g.Expect(env.Client.Create(ctx, &kustomizev1.Kustomization{ObjectMeta: metav1.ObjectMeta{Namespace: "preview-repo", Name: "fleet"},
		Spec: kustomizev1.KustomizationSpec{Path: "./clusters/prod", Interval: metav1.Duration{Duration: 60e9}, Prune: true,
			SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: "GitRepository", Name: "fleet"},
			PostBuild: &kustomizev1.PostBuild{SubstituteFrom: []kustomizev1.SubstituteReference{
				{Kind: "Secret", Name: "cluster-vars"}, {Kind: "ConfigMap", Name: "absent", Optional: true}}}}})).To(Succeed())
	root, err := testenv.RepoRoot()
	g.Expect(err).NotTo(HaveOccurred())
	chartDir := filepath.Join(root, testenv.ClusterChartDir)

	repo := t.TempDir()
	for name, data := range fleetRepository {
		p := filepath.Join(repo, name)
		g.Expect(os.MkdirAll(filepath.Dir(p), 0o755)).To(Succeed())
		g.Expect(os.WriteFile(p, []byte(data), 0o600)).To(Succeed())
	}
	// A CI job runs from the repository's root.
	t.Chdir(repo)
	run := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := Execute(Name, append([]string{"preview", "--kubeconfig", env.KubeConfigPath}, args...), strings.NewReader(""), &out, &errOut)
		return code, out.String(), errOut.String()
	}

	code, out, errOut := run("-n", "preview-repo", "--kustomization", "fleet", "--chart", chartDir, "-o", "json")
	g.Expect(code).To(Equal(preview.ExitOK), errOut)
	var doc struct {
		Version  int
		Releases []preview.Report
	}
	g.Expect(json.Unmarshal([]byte(out), &doc)).To(Succeed())
	g.Expect(doc.Version).To(Equal(preview.SchemaVersion))
	g.Expect(doc.Releases).To(HaveLen(2))
	second, live := doc.Releases[0], doc.Releases[1]
	g.Expect(live.HelmRelease).To(Equal("preview-repo/cluster"))
	g.Expect(live.New).To(BeFalse())
	machines, consumers := live.RolledMachines()
	g.Expect([]int{machines, consumers}).To(Equal([]int{1, 1}),
		"max-pods, from the generated values file under its hashed name and substituted from the Secret, rolls the MachineDeployment: %s", out)
	var rolled preview.Object
	for _, o := range live.Objects {
		if o.Rolls {
			rolled = o
		}
	}
	g.Expect(rolled.Kind).To(Equal("MachineDeployment"))
	g.Expect(rolled.Changes).To(ContainElement(HaveField("Path", "/spec/template/spec/bootstrap/configRef/name")), "the field that rolls it")
	var substituted string
	for _, o := range live.Objects {
		if o.Kind == "KubeadmConfigTemplate" && o.Change == preview.ChangeCreate {
			substituted = o.Name
		}
	}
	g.Expect(substituted).NotTo(BeEmpty())

	g.Expect(second.HelmRelease).To(Equal("preview-repo-new/second"))
	g.Expect(second.New).To(BeTrue())
	g.Expect(second.Error).To(BeEmpty())
	g.Expect(second.Objects).NotTo(BeEmpty())
	for _, o := range second.Objects {
		g.Expect(o.Change).To(Equal(preview.ChangeCreate), "%s/%s", o.Kind, o.Name)
		g.Expect(o.Rolls).To(BeFalse())
	}

	code, out, errOut = run("--kustomization", "fleet", "-n", "preview-repo", "-o", "markdown", "cluster")
	g.Expect(code).To(Equal(preview.ExitOK), errOut)
	g.Expect(out).To(HavePrefix(preview.MarkdownMarker))
	g.Expect(out).To(ContainSubstring("HelmRelease <code>preview-repo/cluster</code>"))
	g.Expect(out).NotTo(ContainSubstring("second"), "the one named")
	g.Expect(out).To(ContainSubstring("| fields |"))

	code, out, errOut = run("-n", "preview-repo", "--kustomization", "preview-repo/fleet")
	g.Expect(code).To(Equal(preview.ExitError), "a new HelmRelease without --chart is an error row")
	g.Expect(out).To(ContainSubstring("HelmRelease preview-repo-new/second\ncannot preview: it is new: with no stored release to take the chart from, pass its chart with --chart"))
	g.Expect(out).To(ContainSubstring("HelmRelease preview-repo/cluster (chart cluster@1.0.0"), "the other is previewed")
	g.Expect(errOut).To(ContainSubstring("preview 2/2"))

	// --path alone builds the folder with no Kustomization: no
	// substitution, so max-pods is the literal ${max_pods}, and the
	// template the chart names after its content is another.
	code, out, errOut = run("--path", "clusters/prod", "-n", "preview-repo", "cluster")
	g.Expect(code).To(Equal(preview.ExitOK), errOut)
	g.Expect(out).To(MatchRegexp(`KubeadmConfigTemplate/mgmt-md0-\w+\s+create`))
	g.Expect(out).NotTo(ContainSubstring(substituted))

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--path", ".."}, "is outside the repository root"},
		{[]string{"--path", "clusters/nope"}, "no such file or directory"},
		{[]string{"--kustomization", "preview-repo/nope"}, `failed to get Kustomization preview-repo/nope`},
		{[]string{"--path", "clusters/prod", "--helmrelease", "x.yaml"}, "use one"},
		{[]string{"--path", "clusters/prod", "-A"}, "-l and -A do not apply"},
		{[]string{"--path", "clusters/prod", "-n", "preview-repo", "nope"}, "holds no HelmRelease nope"},
		{[]string{"--path", "clusters/base/kustomizeconfig.yaml"}, "is not a folder"},
	} {
		code, _, errOut = run(tc.args...)
		g.Expect(code).To(Equal(preview.ExitError), "%v", tc.args)
		g.Expect(errOut).To(ContainSubstring(tc.want), "%v", tc.args)
	}
}
