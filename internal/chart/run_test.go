package chart_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/testenv"

	. "github.com/onsi/gomega"
)

// runValues adds the fixture LockedMachineTemplate kind of the test control
// plane to the default RBAC: the default patterns match it, and the
// controller cannot start while it may not watch a matching kind.
const runValues = `
templateKinds:
  rbac:
    - apiGroup: infrastructure.cluster.x-k8s.io
      resources: [metal3machinetemplates, metal3datatemplates, lockedmachinetemplates]
    - apiGroup: bootstrap.cluster.x-k8s.io
      resources: [kubeadmconfigtemplates, rke2configtemplates]
`

// TestControllerRunsWithChartRBAC installs the chart's RBAC for real, then
// runs the controller binary with the chart's arguments as the chart's
// ServiceAccount (kubeconfig impersonation) on the pivot scenario: it must
// start its watches, patch the drifted templates, write the HelmRelease
// condition and record events, with nothing forbidden.
func TestControllerRunsWithChartRBAC(t *testing.T) {
	env := sharedEnv(t)
	ctx := t.Context()
	g := NewWithT(t)
	const ns, fleet = "tdc-run", "fleet"
	for _, n := range []string{ns, fleet} {
		g.Expect(env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n}})).To(Succeed())
	}
	vals, err := readValuesString(runValues)
	g.Expect(err).NotTo(HaveOccurred())
	files, err := renderRelease(t, vals, "tdc-run", ns) // names apart from other tests' objects
	g.Expect(err).NotTo(HaveOccurred())
	objs, err := decodeObjects([]byte(manifest(files)))
	g.Expect(err).NotTo(HaveOccurred())
	for _, kind := range []string{"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"} {
		for _, o := range ofKind(objs, kind) {
			g.Expect(env.Client.Create(ctx, o)).To(Succeed(), objectKey(o))
		}
	}
	sa := ofKind(objs, "ServiceAccount")[0].GetName()

	hr := createPivotScenario(ctx, t, env.Client, fleet)
	user := fmt.Sprintf("system:serviceaccount:%s:%s", ns, sa)
	ctrl := startController(t, env, user, ns, deploymentArgs(t, objs))

	expectHealed(ctx, t, env.Client, ctrl, hr)
}

// expectHealed waits until the controller has healed the pivot scenario of
// hr: both Metal3MachineTemplates name the management image server, the
// condition reads DriftCorrected and the event is recorded; nothing it
// logged was forbidden.
func expectHealed(ctx context.Context, t *testing.T, c client.Client, ctrl *controller, hr *helmv2.HelmRelease) {
	t.Helper()
	g := NewWithT(t)
	m3 := &unstructured.Unstructured{}
	m3.SetAPIVersion("infrastructure.cluster.x-k8s.io/v1beta1")
	m3.SetKind("Metal3MachineTemplate")
	g.Eventually(func(g Gomega) {
		ctrl.check()
		for _, name := range []string{"mgmt-md0", "mgmt-cp"} {
			g.Expect(c.Get(ctx, client.ObjectKey{Namespace: hr.Namespace, Name: name}, m3)).To(Succeed())
			url, _, _ := unstructured.NestedString(m3.Object, "spec", "template", "spec", "image", "url")
			g.Expect(url).To(Equal(testenv.Management.ImageURL), "Metal3MachineTemplate %s", name)
		}
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(hr), hr)).To(Succeed())
		cond := apimeta.FindStatusCondition(hr.Status.Conditions, api.TemplatesInSyncCondition)
		g.Expect(cond).NotTo(BeNil())
		g.Expect(cond.Reason).To(Equal(api.DriftCorrectedReason), cond.Message)
		g.Expect(eventReasons(ctx, g, c, hr.Namespace)).To(ContainElement(api.TemplateDriftCorrectedEvent))
	}).WithTimeout(2 * time.Minute).WithPolling(time.Second).Should(Succeed())
	g.Expect(strings.ToLower(ctrl.logs.String())).NotTo(ContainSubstring("forbidden"))
}

// TestControllerRunsWithLockdownRBAC is TestControllerRunsWithChartRBAC
// with the multi-tenancy lockdown (defaultServiceAccount): the chart's role
// then grants no Secret access and no template or consumer writes, and the
// controller still heals the pivot scenario, as the tenant's account, which
// may do exactly that in its namespace, with nothing forbidden.
func TestControllerRunsWithLockdownRBAC(t *testing.T) {
	env := sharedEnv(t)
	ctx := t.Context()
	g := NewWithT(t)
	const ns, fleet, tenant = "tdc-lockdown", "fleet-lockdown", "tenant-deployer"
	for _, n := range []string{ns, fleet} {
		g.Expect(env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n}})).To(Succeed())
	}
	vals, err := readValuesString(runValues + "defaultServiceAccount: " + tenant + "\n")
	g.Expect(err).NotTo(HaveOccurred())
	files, err := renderRelease(t, vals, "tdc-lockdown", ns)
	g.Expect(err).NotTo(HaveOccurred())
	objs, err := decodeObjects([]byte(manifest(files)))
	g.Expect(err).NotTo(HaveOccurred())
	for _, r := range rulesOf(t, onlyClusterRole(t, objs)) {
		g.Expect(r.Resources).NotTo(ContainElement("secrets"), "the lockdown role grants no Secret access")
	}
	for _, kind := range []string{"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"} {
		for _, o := range ofKind(objs, kind) {
			g.Expect(env.Client.Create(ctx, o)).To(Succeed(), objectKey(o))
			if o.GetNamespace() == "" {
				t.Cleanup(func() { _ = env.Client.Delete(context.Background(), o) })
			}
		}
	}
	// The tenant's account: what helm-controller's would need for the
	// release, in its own namespace.
	g.Expect(env.Client.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: tenant, Namespace: fleet}})).To(Succeed())
	g.Expect(env.Client.Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: tenant, Namespace: fleet}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "list"}},
		{APIGroups: []string{"cluster.x-k8s.io", "controlplane.cluster.x-k8s.io", "bootstrap.cluster.x-k8s.io", "infrastructure.cluster.x-k8s.io"},
			Resources: []string{"*"}, Verbs: []string{"get", "list", "watch", "patch", "create", "delete"}},
	}})).To(Succeed())
	g.Expect(env.Client.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: tenant, Namespace: fleet},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: tenant},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: tenant, Namespace: fleet}}})).To(Succeed())
	sa := ofKind(objs, "ServiceAccount")[0].GetName()

	hr := createPivotScenario(ctx, t, env.Client, fleet)
	args := deploymentArgs(t, objs)
	g.Expect(args).To(ContainElement("--default-service-account=" + tenant))
	ctrl := startController(t, env, fmt.Sprintf("system:serviceaccount:%s:%s", ns, sa), ns, args)

	expectHealed(ctx, t, env.Client, ctrl, hr)
}

// deploymentArgs returns the controller arguments of the rendered Deployment.
func deploymentArgs(t testing.TB, objs []*unstructured.Unstructured) []string {
	t.Helper()
	deps := ofKind(objs, "Deployment")
	if len(deps) != 1 {
		t.Fatalf("want 1 Deployment, got %d", len(deps))
	}
	var d appsv1.Deployment
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(deps[0].Object, &d); err != nil {
		t.Fatal(err)
	}
	return d.Spec.Template.Spec.Containers[0].Args
}

// createPivotScenario creates the seed case in ns: live Metal3 templates
// naming the bootstrap image server, a stored release naming the management
// one, and an opted-in HelmRelease whose history points at that release.
func createPivotScenario(ctx context.Context, t testing.TB, c client.Client, ns string) *helmv2.HelmRelease {
	t.Helper()
	g := NewWithT(t)
	rel := testenv.Release{Name: "cluster", Namespace: ns, Version: 1, Status: "deployed", ApplyMethod: "csa",
		Manifest: testenv.RenderClusterChart(testenv.Management)}
	g.Expect(testenv.CreateLive(ctx, c, ns, "cluster", testenv.RenderClusterChart(testenv.Bootstrap), nil)).To(Succeed())
	hr := &helmv2.HelmRelease{
		ObjectMeta: metav1.ObjectMeta{Name: "cluster", Namespace: ns, Annotations: map[string]string{api.ModeAnnotation: api.ModeEnabled}},
		Spec: helmv2.HelmReleaseSpec{
			Interval: metav1.Duration{Duration: time.Minute},
			Chart: &helmv2.HelmChartTemplate{Spec: helmv2.HelmChartTemplateSpec{
				Chart: "cluster", SourceRef: helmv2.CrossNamespaceObjectReference{Kind: "HelmRepository", Name: "charts"},
			}},
		},
	}
	g.Expect(c.Create(ctx, hr)).To(Succeed())
	g.Expect(testenv.StoreRelease(ctx, sharedEnv(t), rel)).To(Succeed())
	g.Expect(testenv.SetHistory(ctx, c, hr, rel)).To(Succeed())
	return hr
}

// eventReasons lists the reasons of the core/v1 and events.k8s.io/v1 events
// in ns (the recorder may use either API).
func eventReasons(ctx context.Context, g Gomega, c client.Client, ns string) []string {
	var out []string
	var core corev1.EventList
	g.Expect(c.List(ctx, &core, client.InNamespace(ns))).To(Succeed())
	for _, e := range core.Items {
		out = append(out, e.Reason)
	}
	return out
}

// controller is a running controller process.
type controller struct {
	// logs is the process' output.
	logs *syncBuffer
	// exited is closed when the process has exited.
	exited chan struct{}
}

// check stops an Eventually early when the process has exited.
func (c *controller) check() {
	select {
	case <-c.exited:
		StopTrying("the controller exited:\n" + c.logs.String()).Now()
	default:
	}
}

// startController builds the controller and runs it with args as user
// (kubeconfig impersonation of the admin user), on local ports, without
// leader election (which needs the in-cluster namespace file) and without
// a notification-controller. The process is stopped when the test ends.
func startController(t *testing.T, env *testenv.Env, user, ns string, args []string) *controller {
	t.Helper()
	g := NewWithT(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "template-drift-controller")
	build := exec.Command("go", "build", "-o", bin, "./cmd/template-drift-controller")
	build.Dir = repoPath(t)
	out, err := build.CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), "go build: %s", out)

	kc, err := clientcmd.LoadFromFile(env.KubeConfigPath)
	g.Expect(err).NotTo(HaveOccurred())
	for _, a := range kc.AuthInfos {
		a.Impersonate = user
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	g.Expect(clientcmd.WriteToFile(*kc, kubeconfig)).To(Succeed())

	args = append(args, // later flags win
		"--metrics-addr="+freeAddr(t), "--health-addr="+freeAddr(t),
		"--enable-leader-election=false", "--events-addr=")
	c := &controller{logs: &syncBuffer{}, exited: make(chan struct{})}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig, "RUNTIME_NAMESPACE="+ns)
	cmd.Stdout, cmd.Stderr = c.logs, c.logs
	g.Expect(cmd.Start()).To(Succeed())
	go func() { _ = cmd.Wait(); close(c.exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-c.exited:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-c.exited
		}
		if t.Failed() {
			t.Logf("controller output:\n%s", c.logs.String())
		}
	})
	return c
}

// freeAddr returns a free local TCP address.
func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// syncBuffer is a bytes.Buffer safe for a process writing while the test
// reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
