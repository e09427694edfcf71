package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/meta"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/internal/preview"
	"github.com/templatedrift/template-drift-controller/internal/testenv"
)

// TestPreviewCommand runs the preview command against a real API server
// with the real Cluster API and Metal3 managers, on the e2e cluster chart
// installed as helm-controller leaves it: its exit codes for each
// --fail-on, its three outputs, the change given by --set, --values and
// --helmrelease, the fleet form, and its refusals.
func TestPreviewCommand(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	for _, ns := range []string{"preview-a", "preview-b"} {
		g.Expect(env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		hr, err := testenv.InstallClusterChart(ctx, env, ns, "csa")
		g.Expect(err).NotTo(HaveOccurred())
		patch := client.MergeFrom(hr.DeepCopy())
		hr.SetLabels(map[string]string{"fleet": "preview"})
		g.Expect(env.Client.Patch(ctx, hr, patch)).To(Succeed())
	}
	runIn := func(stdin string, args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := Execute(Name, append([]string{"preview", "--kubeconfig", env.KubeConfigPath}, args...), strings.NewReader(stdin), &out, &errOut)
		return code, out.String(), errOut.String()
	}
	run := func(args ...string) (int, string, string) { return runIn("", args...) }
	dir := t.TempDir()
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		g.Expect(os.WriteFile(p, []byte(content), 0o600)).To(Succeed())
		return p
	}

	code, out, errOut := run("-n", "preview-a", "cluster")
	g.Expect(code).To(Equal(preview.ExitOK), errOut)
	g.Expect(out).To(ContainSubstring("nothing changes"))
	g.Expect(out).To(ContainSubstring("1 release: 0 roll 0 Machines, 0 upgrades would fail"))

	code, out, errOut = run("-n", "preview-a", "--set", "imageServerIP=192.168.100.9", "cluster")
	g.Expect(code).To(Equal(preview.ExitFound), errOut)
	g.Expect(out).To(MatchRegexp(`Metal3DataTemplate/mgmt-cp-metadata-\S+\s+refused\s+the upgrade fails`))
	g.Expect(out).To(ContainSubstring("1 upgrade would fail"))

	rolls := file("rolls.yaml", "kubeletArgs:\n  max-pods: \"200\"\n")
	code, out, errOut = run("-n", "preview-a", "--values", rolls, "cluster")
	g.Expect(code).To(Equal(preview.ExitOK), "a rollout is not a failure: %s", errOut)
	g.Expect(out).To(MatchRegexp(`MachineDeployment/mgmt-md0\s+update\s+updated\s+1 Machine\s+KubeadmConfig is not up-to-date`))
	code, _, _ = run("-n", "preview-a", "--values", rolls, "--fail-on=rollout", "cluster")
	g.Expect(code).To(Equal(preview.ExitFound))

	code, out, _ = run("-n", "preview-a", "--set", "imageURL=http://192.168.100.9/u.qcow2", "-o", "markdown", "--fail-on", "change", "cluster")
	g.Expect(code).To(Equal(preview.ExitFound))
	g.Expect(out).To(ContainSubstring("| `Metal3MachineTemplate/mgmt-md0-"))
	g.Expect(out).To(ContainSubstring("only Machines created later get the change"))

	proposed := file("hr.yaml", `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: cluster, namespace: preview-a}
spec:
  interval: 1m
  releaseName: cluster
  chart: {spec: {chart: cluster, version: 1.0.0, sourceRef: {kind: HelmRepository, name: charts}}}
  values: {kubernetesVersion: v1.34.1}
`)
	code, out, errOut = run("-n", "preview-a", "--helmrelease", proposed, "-o", "json", "cluster")
	g.Expect(code).To(Equal(preview.ExitOK), errOut)
	var doc struct{ Releases []preview.Report }
	g.Expect(json.Unmarshal([]byte(out), &doc)).To(Succeed())
	g.Expect(doc.Releases).To(HaveLen(1))
	machines, consumers := doc.Releases[0].RolledMachines()
	g.Expect(consumers).To(Equal(2), "the control plane and the MachineDeployment")
	g.Expect(machines).To(Equal(2))

	bumped := file("bumped.yaml", `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: cluster, namespace: preview-a}
spec:
  interval: 1m
  chart: {spec: {chart: cluster, version: 2.0.0, sourceRef: {kind: HelmRepository, name: charts}}}
`)
	code, _, errOut = run("-n", "preview-a", "--helmrelease", bumped, "cluster")
	g.Expect(code).To(Equal(preview.ExitError))
	g.Expect(errOut).To(ContainSubstring(`changes the chart of HelmRelease preview-a/cluster from chart cluster@1.0.0 from HelmRepository preview-a/charts ` +
		`to chart cluster@2.0.0 from HelmRepository preview-a/charts: the stored release keeps only its own chart, so pass the new one with --chart`))
	g.Expect(errOut).To(ContainSubstring("helm pull oci://REGISTRY/CHART --version X"))

	// A chart bump through chartRef is refused the same way, never rendered
	// silently with the stored chart.
	moved := file("chartref.yaml", `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: cluster, namespace: preview-a}
spec:
  interval: 1m
  chartRef: {kind: OCIRepository, name: cluster-v2}
`)
	code, _, errOut = run("-n", "preview-a", "--helmrelease", moved, "cluster")
	g.Expect(code).To(Equal(preview.ExitError))
	g.Expect(errOut).To(ContainSubstring(`to chartRef OCIRepository preview-a/cluster-v2: the stored release keeps only its own chart`))

	// Several documents on stdin, as `kustomize build | templatedrift
	// preview --helmrelease -` gives them: each selected HelmRelease takes
	// its own, other kinds are read for the chart sources only.
	docs := `apiVersion: v1
kind: ConfigMap
metadata: {name: unrelated}
data: {a: b}
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: cluster, namespace: preview-b}
spec:
  interval: 1m
  releaseName: cluster
  chart: {spec: {chart: cluster, version: 1.0.0, sourceRef: {kind: HelmRepository, name: charts}}}
  values: {imageServerIP: 192.168.100.9}
`
	code, out, errOut = runIn(docs, "-A", "-l", "fleet=preview", "--helmrelease", "-")
	g.Expect(code).To(Equal(preview.ExitFound), errOut)
	g.Expect(out).To(ContainSubstring("2 releases: 0 roll 0 Machines, 1 upgrade would fail"),
		"preview-b takes its document (an image server change its locked template refuses), preview-a its live spec")
	code, _, errOut = runIn(docs, "-n", "preview-a", "--helmrelease", "-", "cluster")
	g.Expect(code).To(Equal(preview.ExitError))
	g.Expect(errOut).To(ContainSubstring("--helmrelease (stdin) proposes no HelmRelease preview-a/cluster"))
	code, _, errOut = runIn(strings.ReplaceAll(docs, "name: cluster,", "name: new-cluster,"), "-A", "-l", "fleet=preview", "--helmrelease", "-")
	g.Expect(code).To(Equal(preview.ExitError))
	g.Expect(errOut).To(ContainSubstring("not on the cluster or not selected: preview-b/new-cluster (preview a new HelmRelease from --path or --kustomization)"))

	// A fleet goes on past a HelmRelease it cannot preview: an error row,
	// exit 2, progress on stderr.
	remote := testenv.NewHelmRelease("preview-b", "remote", nil)
	remote.Labels = map[string]string{"mixed": "yes"}
	remote.Spec.KubeConfig = &meta.KubeConfigReference{SecretRef: &meta.SecretKeyReference{Name: "remote-kubeconfig"}}
	g.Expect(env.Client.Create(ctx, remote)).To(Succeed())
	hr := &helmv2.HelmRelease{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: "preview-a", Name: "cluster"}, hr)).To(Succeed())
	patch := client.MergeFrom(hr.DeepCopy())
	hr.Labels["mixed"] = "yes"
	g.Expect(env.Client.Patch(ctx, hr, patch)).To(Succeed())
	code, out, errOut = run("-A", "-l", "mixed=yes", "--parallel", "2")
	g.Expect(code).To(Equal(preview.ExitError), errOut)
	g.Expect(out).To(ContainSubstring("HelmRelease preview-b/remote\ncannot preview: it deploys to a remote cluster"))
	g.Expect(out).To(ContainSubstring("HelmRelease preview-a/cluster (chart cluster@1.0.0"), "the other release is previewed")
	g.Expect(out).To(ContainSubstring("2 releases: 0 roll 0 Machines, 0 upgrades would fail, 1 could not be previewed"))
	g.Expect(errOut).To(ContainSubstring("preview 2/2 "), "progress, a line per release off a terminal")
	code, out, _ = run("-A", "-l", "mixed=yes", "-o", "json")
	g.Expect(code).To(Equal(preview.ExitError))
	g.Expect(out).To(ContainSubstring(`"error": "it deploys to a remote cluster`))

	code, out, errOut = run("-A", "-l", "fleet=preview", "--set", "imageServerIP=192.168.100.9")
	g.Expect(code).To(Equal(preview.ExitFound), errOut)
	g.Expect(out).To(ContainSubstring("HelmRelease preview-a/cluster"))
	g.Expect(out).To(ContainSubstring("HelmRelease preview-b/cluster"))
	g.Expect(out).To(ContainSubstring("2 releases: 0 roll 0 Machines, 2 upgrades would fail"))

	code, _, errOut = run("-n", "preview-a", "nope")
	g.Expect(code).To(Equal(preview.ExitError))
	g.Expect(errOut).To(ContainSubstring(`"nope" not found`))
	code, _, _ = run("-n", "preview-a", "--fail-on", "always", "cluster")
	g.Expect(code).To(Equal(preview.ExitError))
	code, _, _ = run("-n", "preview-a", "-l", "x=y", "cluster")
	g.Expect(code).To(Equal(preview.ExitError), "a name and a selector")
	code, out, _ = run("--help")
	g.Expect(code).To(Equal(preview.ExitOK))
	g.Expect(out).To(ContainSubstring("--fail-on"))
}
