package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/diffreport"
	"github.com/templatedrift/template-drift-controller/internal/release"
	"github.com/templatedrift/template-drift-controller/internal/testenv"
)

// templateVersions snapshots what the add-on's field manager wrote to the
// templates in ns: the real Cluster API and Metal3 managers write them too
// (owner references, CAPM3's finalizer), so resourceVersions would change
// under a diff that writes nothing.
func templateVersions(g Gomega, ns string) map[string]string {
	out := map[string]string{}
	for _, kind := range []string{"Metal3MachineTemplate", "Metal3DataTemplate"} {
		l := &unstructured.UnstructuredList{}
		l.SetAPIVersion("infrastructure.cluster.x-k8s.io/v1beta1")
		l.SetKind(kind + "List")
		g.Expect(env.Client.List(context.Background(), l, client.InNamespace(ns))).To(Succeed())
		for _, o := range l.Items {
			var ours []string
			for _, f := range o.GetManagedFields() {
				if f.Manager == api.ControllerName {
					ours = append(ours, fmt.Sprintf("%s@%s:%s", f.Operation, f.Time, f.FieldsV1))
				}
			}
			out[kind+"/"+o.GetName()] = strings.Join(ours, ";")
		}
	}
	return out
}

// TestDiffExitCodes runs the diff command against a real API server: 1 and
// the drifted paths with what auto would do for a pivoted release (text and
// JSON), 0 for a release in sync, 2 for a missing HelmRelease and for a
// corrupt release; and it never writes.
func TestDiffExitCodes(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	_, err := testenv.Pivot{Namespace: "drifted", Live: testenv.Bootstrap, Release: testenv.Management, ApplyMethod: "csa"}.Install(ctx, env)
	g.Expect(err).NotTo(HaveOccurred())
	_, err = testenv.Pivot{Namespace: "insync", Live: testenv.Management, Release: testenv.Management, ApplyMethod: "csa"}.Install(ctx, env)
	g.Expect(err).NotTo(HaveOccurred())
	before := templateVersions(g, "drifted")

	run := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := Execute(Name, append([]string{"diff", "--kubeconfig", env.KubeConfigPath}, args...), strings.NewReader(""), &out, &errOut)
		return code, out.String(), errOut.String()
	}

	code, out, _ := run("-n", "drifted", "cluster")
	g.Expect(code).To(Equal(diffreport.ExitDrift), out)
	g.Expect(out).To(ContainSubstring("Metal3MachineTemplate/mgmt-md0: would in-place, rolls machines: no"))
	g.Expect(out).To(ContainSubstring(`/spec/template/spec/image/url: "http://10.10.10.17/images/ubuntu.qcow2" → "http://192.168.100.2/images/ubuntu.qcow2"`))
	g.Expect(templateVersions(g, "drifted")).To(Equal(before), "diff writes nothing")

	code, out, _ = run("-n", "drifted", "-o", "json", "cluster")
	g.Expect(code).To(Equal(diffreport.ExitDrift))
	var d diffreport.DiffReport
	g.Expect(json.Unmarshal([]byte(out), &d)).To(Succeed())
	g.Expect(d.InSync).To(BeFalse())
	g.Expect(d.Release).To(Equal("drifted/cluster.v1"))
	g.Expect(d.Templates).To(ContainElement(And(HaveField("Name", "mgmt-md0"), HaveField("Kind", "Metal3MachineTemplate"),
		HaveField("Strategy", "in-place"), HaveField("RollsMachines", false))))

	code, out, _ = run("-n", "insync", "cluster")
	g.Expect(code).To(Equal(diffreport.ExitInSync), out)
	g.Expect(out).To(ContainSubstring("0 of 5 templates drifted"))

	code, _, errOut := run("-n", "insync", "nope")
	g.Expect(code).To(Equal(diffreport.ExitError))
	g.Expect(errOut).To(ContainSubstring(`helmreleases.helm.toolkit.fluxcd.io "nope" not found`))

	s := &corev1.Secret{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: "insync", Name: release.SecretName("cluster", 1)}, s)).To(Succeed())
	s.Data["release"] = []byte("not base64 at all")
	g.Expect(env.Client.Update(ctx, s)).To(Succeed())
	code, out, _ = run("-n", "insync", "cluster")
	g.Expect(code).To(Equal(diffreport.ExitError))
	g.Expect(out).To(ContainSubstring("cannot diff: ReleaseUnavailable"))

	code, _, _ = run("-o", "yaml", "cluster")
	g.Expect(code).To(Equal(diffreport.ExitError), "a bad flag is an error")

	code, out, _ = run("--help")
	g.Expect(code).To(Equal(diffreport.ExitInSync), "help is not an error")
	g.Expect(out).To(ContainSubstring("--output"))
}

// TestDiffFleet runs diff over a fleet selected by -l, with -A or in one
// namespace: a drifted release, one in sync, and one the selector leaves
// out. The fleet's exit code is its worst release's: 1 with one drifted,
// 2 once a release cannot be looked at, while the others are still
// diffed. Text, JSON and markdown carry every release and the total.
func TestDiffFleet(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	install := func(ns string, live testenv.ChartValues, fleet string) {
		hr, err := testenv.Pivot{Namespace: ns, Live: live, Release: testenv.Management, ApplyMethod: "csa"}.Install(ctx, env)
		g.Expect(err).NotTo(HaveOccurred())
		patch := client.MergeFrom(hr.DeepCopy())
		hr.SetLabels(map[string]string{"fleet": fleet})
		g.Expect(env.Client.Patch(ctx, hr, patch)).To(Succeed())
	}
	install("fleet-drifted", testenv.Bootstrap, "diff")
	install("fleet-insync", testenv.Management, "diff")
	install("fleet-other", testenv.Bootstrap, "other")
	run := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := Execute(Name, append([]string{"diff", "--kubeconfig", env.KubeConfigPath}, args...), strings.NewReader(""), &out, &errOut)
		return code, out.String(), errOut.String()
	}

	code, out, errOut := run("-A", "-l", "fleet=diff")
	g.Expect(code).To(Equal(diffreport.ExitDrift), errOut)
	g.Expect(out).To(ContainSubstring("HelmRelease fleet-drifted/cluster (release fleet-drifted/cluster.v1)\n"))
	g.Expect(out).To(ContainSubstring("  Metal3MachineTemplate/mgmt-md0: would in-place, rolls machines: no\n"))
	g.Expect(out).To(ContainSubstring("HelmRelease fleet-insync/cluster (release fleet-insync/cluster.v1)\n"))
	g.Expect(out).NotTo(ContainSubstring("fleet-other"), "the selector leaves it out")
	g.Expect(out).To(HaveSuffix("0 of 5 templates drifted\n\n2 releases: 1 not in sync, 0 could not be diffed\n"))

	code, out, errOut = run("-n", "fleet-insync", "-l", "fleet=diff")
	g.Expect(code).To(Equal(diffreport.ExitInSync), errOut)
	g.Expect(out).NotTo(ContainSubstring("fleet-drifted"), "without -A, the namespace's only")
	g.Expect(out).To(HaveSuffix("1 release: 0 not in sync, 0 could not be diffed\n"))

	code, out, _ = run("-n", "fleet-insync", "-l", "fleet=none")
	g.Expect(code).To(Equal(diffreport.ExitInSync), "nothing selected is nothing drifted")
	g.Expect(out).To(Equal("0 releases: 0 not in sync, 0 could not be diffed\n"))

	code, out, _ = run("-A", "-l", "fleet=diff", "-o", "json")
	g.Expect(code).To(Equal(diffreport.ExitDrift))
	var doc struct{ Releases []diffreport.DiffReport }
	g.Expect(json.Unmarshal([]byte(out), &doc)).To(Succeed())
	g.Expect(doc.Releases).To(HaveExactElements(
		And(HaveField("HelmRelease", "fleet-drifted/cluster"), HaveField("InSync", false),
			HaveField("Templates", ContainElement(And(HaveField("Name", "mgmt-md0"), HaveField("Strategy", "in-place"))))),
		And(HaveField("HelmRelease", "fleet-insync/cluster"), HaveField("InSync", true))))

	code, out, _ = run("-A", "-l", "fleet=diff", "-o", "markdown")
	g.Expect(code).To(Equal(diffreport.ExitDrift))
	g.Expect(out).To(HavePrefix("**2 releases: 1 not in sync, 0 could not be diffed**\n\n### HelmRelease `fleet-drifted/cluster` (release `fleet-drifted/cluster.v1`)\n"))
	g.Expect(out).To(ContainSubstring("| `Metal3MachineTemplate/mgmt-md0` | would in-place, rolls machines: no | `/spec/template/spec/image/url` | " +
		"`\"http://10.10.10.17/images/ubuntu.qcow2\"` | `\"http://192.168.100.2/images/ubuntu.qcow2\"` |\n"))
	g.Expect(out).To(ContainSubstring("### HelmRelease `fleet-insync/cluster` (release `fleet-insync/cluster.v1`)\n\n0 of 5 templates drifted.\n"))

	code, out, _ = run("-n", "fleet-drifted", "-o", "markdown", "cluster")
	g.Expect(code).To(Equal(diffreport.ExitDrift))
	g.Expect(out).To(HavePrefix("**1 release: 1 not in sync, 0 could not be diffed**\n"), "a named HelmRelease in markdown")

	s := &corev1.Secret{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: "fleet-insync", Name: release.SecretName("cluster", 1)}, s)).To(Succeed())
	s.Data["release"] = []byte("not base64 at all")
	g.Expect(env.Client.Update(ctx, s)).To(Succeed())
	code, out, errOut = run("-A", "-l", "fleet=diff")
	g.Expect(code).To(Equal(diffreport.ExitError), "a release that cannot be looked at: %s", errOut)
	g.Expect(out).To(ContainSubstring("  Metal3MachineTemplate/mgmt-md0: would in-place"), "the others are still diffed")
	g.Expect(out).To(ContainSubstring("HelmRelease fleet-insync/cluster\ncannot diff: ReleaseUnavailable: "))
	g.Expect(out).To(HaveSuffix("2 releases: 1 not in sync, 1 could not be diffed\n"))
}
