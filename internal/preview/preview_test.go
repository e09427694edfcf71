package preview_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/preview"
	"github.com/templatedrift/template-drift-controller/internal/testenv"
	"github.com/templatedrift/template-drift-controller/test/harness"
)

const previewUser = "tdc-preview"

// auditPolicy logs the previewer's requests with their bodies (a delete
// carries dryRun in its DeleteOptions, not in its query), and the rest as
// metadata.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Request
  users: ["` + previewUser + `"]
- level: Metadata
`

var (
	// auditLog is the API server's audit log; previewer is the user the
	// previews run as, whose requests the log is searched for.
	auditLog  string
	previewer *rest.Config
	// shared is a control plane with the real Cluster API and Metal3
	// managers and webhooks: what they refuse and what they default is
	// what the preview must predict.
	shared = &testenv.Lazy{Name: "preview", Setup: func(e *testenv.Env) error {
		kubeconfig, err := e.AddUser(previewUser, []string{"system:masters"})
		if err != nil {
			return err
		}
		previewer, err = clientcmd.BuildConfigFromFlags("", kubeconfig)
		return err
	}}
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "tdc-preview-audit-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	flags, log, err := harness.AuditFlags(dir, auditPolicy)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	auditLog = log
	shared.Options = testenv.Options{Managers: true, APIServerFlags: flags}
	code := shared.Run(m)
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

func managersEnv(t *testing.T) *testenv.Env { return shared.Env(t) }

// isDryRun reports whether an audited request asked for a dry-run, in its
// query or in its body's options.
func isDryRun(ev harness.Event) bool {
	if ev.IsDryRun() {
		return true
	}
	var opts struct {
		DryRun []string `json:"dryRun"`
	}
	return json.Unmarshal(ev.RequestObject, &opts) == nil && slices.Contains(opts.DryRun, "All")
}

// installed is the e2e cluster chart installed as helm-controller leaves
// it: a deployed release whose manifest is the chart's render, and its
// objects live.
type installed struct {
	env   *testenv.Env
	hr    *helmv2.HelmRelease
	kinds *manifest.KindMatcher
}

func install(t *testing.T, applyMethod string) installed {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	env := managersEnv(t)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "preview-"}}
	g.Expect(env.Client.Create(ctx, ns)).To(Succeed())
	hr, err := testenv.InstallClusterChart(ctx, env, ns.Name, applyMethod)
	g.Expect(err).NotTo(HaveOccurred())
	kinds, err := manifest.ParseKinds(manifest.DefaultTemplateKinds)
	g.Expect(err).NotTo(HaveOccurred())
	return installed{env: env, hr: hr, kinds: kinds}
}

// preview runs a preview of values as the previewer user.
func (in installed) preview(t *testing.T, values string) preview.Report {
	t.Helper()
	hr := in.hr.DeepCopy()
	hr.Spec.Values = &apiextensionsv1.JSON{Raw: []byte(values)}
	c, err := client.New(previewer, client.Options{Scheme: in.env.Client.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := preview.Run(context.Background(), preview.Request{HelmRelease: hr, Local: c, Target: c,
		TargetConfig: previewer, Kinds: in.kinds, Now: time.Now()})
	if err != nil {
		t.Fatalf("preview: %v", err)
	}
	checkSchema(t, rep)
	return rep
}

// settled runs check until it passes, for a minute at most. Just after the
// install, the real Cluster API and Metal3 managers still write the
// release's objects (a Cluster's finalizer, its control plane endpoint);
// one written between a preview's read and its dry-run shows as changed in
// that preview only. A change the values make shows in every preview, so
// a wrong prediction still fails.
func settled(t *testing.T, check func(g Gomega)) {
	t.Helper()
	NewWithT(t).Eventually(check).WithTimeout(time.Minute).WithPolling(2 * time.Second).Should(Succeed())
}

// byKind returns the changed objects of rep by kind.
func byKind(rep preview.Report) map[string][]preview.Object {
	out := map[string][]preview.Object{}
	for _, o := range rep.Objects {
		if o.Change != preview.ChangeNone {
			out[o.Kind] = append(out[o.Kind], o)
		}
	}
	return out
}

// TestPreviewPredicts previews, on the real Cluster API and Metal3 managers,
// the changes of the table the preview is specified by, for a release
// applied with client-side and with server-side apply.
func TestPreviewPredicts(t *testing.T) {
	for _, method := range []string{"csa", "ssa"} {
		t.Run(method, func(t *testing.T) {
			in := install(t, method)

			t.Run("the release as it is changes nothing", func(t *testing.T) {
				settled(t, func(g Gomega) {
					rep := in.preview(t, `{}`)
					g.Expect(rep.Changes()).To(BeZero(), "%+v", byKind(rep))
					g.Expect(rep.ApplyMethod).To(Equal(method))
					g.Expect(preview.ExitCode([]preview.Report{rep}, preview.FailOnChange)).To(Equal(preview.ExitOK))
				})
			})

			t.Run("an image URL changes the machine templates in place", func(t *testing.T) {
				settled(t, func(g Gomega) {
					rep := in.preview(t, `{"imageURL": "http://192.168.100.9/images/ubuntu.qcow2"}`)
					changed := byKind(rep)
					g.Expect(changed).To(HaveKey("Metal3MachineTemplate"))
					g.Expect(changed).To(HaveLen(1), "only the machine templates: %+v", changed)
					for _, o := range changed["Metal3MachineTemplate"] {
						g.Expect(o.Change).To(Equal(preview.ChangeUpdate))
						g.Expect(o.Fails).To(BeFalse())
						g.Expect(o.Note).To(ContainSubstring("only Machines created later"))
					}
					g.Expect(preview.ExitCode([]preview.Report{rep}, preview.FailOnRollout)).To(Equal(preview.ExitOK))
					g.Expect(preview.ExitCode([]preview.Report{rep}, preview.FailOnChange)).To(Equal(preview.ExitFound))
				})
			})

			t.Run("a renamed bootstrap template rolls the MachineDeployment", func(t *testing.T) {
				g := NewWithT(t)
				rep := in.preview(t, `{"kubeletArgs": {"max-pods": "200"}}`)
				changed := byKind(rep)
				g.Expect(changed["KubeadmConfigTemplate"]).To(ConsistOf(
					HaveField("Change", preview.ChangeCreate), HaveField("Change", preview.ChangeDelete)))
				g.Expect(changed["MachineDeployment"]).To(HaveLen(1))
				md := changed["MachineDeployment"][0]
				g.Expect(md.Rolls).To(BeTrue())
				g.Expect(md.Machines).To(HaveValue(BeEquivalentTo(1)), "replicas: 1")
				g.Expect(md.Reasons).To(ContainElement("KubeadmConfig is not up-to-date"))
				g.Expect(preview.ExitCode([]preview.Report{rep}, preview.FailOnFailure)).To(Equal(preview.ExitOK))
				g.Expect(preview.ExitCode([]preview.Report{rep}, preview.FailOnRollout)).To(Equal(preview.ExitFound))
			})

			t.Run("a version bump rolls the control plane and the workers", func(t *testing.T) {
				g := NewWithT(t)
				rep := in.preview(t, `{"kubernetesVersion": "v1.34.1"}`)
				changed := byKind(rep)
				g.Expect(changed["KubeadmControlPlane"]).To(ConsistOf(And(HaveField("Rolls", true),
					HaveField("Reasons", ContainElement("Version v1.33.4, v1.34.1 required")))))
				g.Expect(changed["MachineDeployment"]).To(ConsistOf(HaveField("Rolls", true)))
				machines, consumers := rep.RolledMachines()
				g.Expect(consumers).To(Equal(2))
				g.Expect(machines).To(Equal(2))
			})

			t.Run("locked metaData under the same name fails the upgrade", func(t *testing.T) {
				g := NewWithT(t)
				rep := in.preview(t, `{"imageServerIP": "192.168.100.9"}`)
				g.Expect(rep.Fails()).To(BeTrue(), "%+v", byKind(rep))
				failed := byKind(rep)["Metal3DataTemplate"]
				g.Expect(failed).NotTo(BeEmpty())
				for _, o := range failed {
					g.Expect(o.Change).To(Equal(preview.ChangeRefused))
					g.Expect(o.Message).NotTo(BeEmpty(), "the webhook's message")
					g.Expect(o.Note).To(ContainSubstring("hash-suffixed name"))
				}
				g.Expect(preview.ExitCode([]preview.Report{rep}, preview.FailOnFailure)).To(Equal(preview.ExitFound))
			})
		})
	}
	t.Run("every write of the previews is a dry-run", func(t *testing.T) {
		g := NewWithT(t)
		var writes, dryRuns []string
		err := harness.ReadAudit(auditLog, "", func(ev harness.Event) {
			if ev.Stage != "ResponseComplete" || ev.User.Username != previewUser {
				return
			}
			switch ev.Verb {
			case "create", "update", "patch", "delete", "deletecollection":
				if isDryRun(ev) {
					dryRuns = append(dryRuns, ev.Verb+" "+ev.ObjectRef.Resource)
				} else {
					writes = append(writes, ev.Verb+" "+ev.RequestURI)
				}
			}
		})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(dryRuns).NotTo(BeEmpty(), "the previews asked the server")
		g.Expect(dryRuns).To(ContainElement(HavePrefix("patch ")))
		g.Expect(dryRuns).To(ContainElement(HavePrefix("create ")))
		g.Expect(dryRuns).To(ContainElement(HavePrefix("delete ")))
		g.Expect(writes).To(BeEmpty(), "a write without dryRun")
	})
}
