package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
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

var env *testenv.Env

func TestMain(m *testing.M) {
	var err error
	if env, err = testenv.StartWith("diff", testenv.Options{Managers: true}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	_ = env.Stop()
	os.Exit(code)
}

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
		code := runDiff(append([]string{"--kubeconfig", env.KubeConfigPath}, args...), &out, &errOut)
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

	code, _, errOut = run("--help")
	g.Expect(code).To(Equal(diffreport.ExitInSync), "help is not an error")
	g.Expect(errOut).To(ContainSubstring("--output"))
}
