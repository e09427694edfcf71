package testenv_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/templatedrift/template-drift-controller/internal/testenv"
)

func obj(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(y), &u.Object); err != nil {
		t.Fatalf("bad fixture: %v", err)
	}
	return u
}

// TestPlatform proves the plain test control plane (no Cluster API or
// Metal3 manager: TestManagedControlPlane covers those) runs the pinned
// versions, and that the fixture of a provider that locks its whole
// template refuses spec changes as Invalid while its metadata stays mutable.
func TestPlatform(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	env, err := testenv.Start("platform")
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { g.Expect(env.Stop()).To(Succeed()) })

	dc, err := discovery.NewDiscoveryClientForConfig(env.Config)
	g.Expect(err).NotTo(HaveOccurred())
	info, err := dc.ServerVersion()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(info.GitVersion).To(Equal(env.Paths.KubeVersion))
	etcdVersion, err := exec.Command(env.Paths.Etcd, "--version").Output()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(etcdVersion)).To(ContainSubstring("etcd Version: " + strings.TrimPrefix(env.Paths.EtcdVersion, "v")))
	t.Logf("control plane %q: kube-apiserver %s with etcd %s at %s", env.Name, info.GitVersion, env.Paths.EtcdVersion, env.Config.Host)

	c := env.Client

	t.Run("LockedMachineTemplate spec is locked, metadata is not", func(t *testing.T) {
		g := NewWithT(t)
		locked := obj(t, `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: LockedMachineTemplate
metadata: {name: cp, namespace: default}
spec:
  template:
    spec: {image: "http://10.10.10.17/cp.img", flavor: large}
`)
		g.Expect(c.Create(ctx, locked)).To(Succeed())

		changed := locked.DeepCopy()
		g.Expect(unstructured.SetNestedField(changed.Object, "http://192.168.100.2/cp.img", "spec", "template", "spec", "image")).To(Succeed())
		err := c.Update(ctx, changed)
		g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
		g.Expect(err.Error()).To(ContainSubstring("spec.template.spec field is immutable. Please create a new resource instead."))

		locked.SetLabels(map[string]string{"templatedrift.io/test": "metadata-only"})
		g.Expect(c.Update(ctx, locked)).To(Succeed())
	})

	t.Run("upstream CRDs carry the clusterctl and contract labels", func(t *testing.T) {
		g := NewWithT(t)
		crd := &unstructured.Unstructured{}
		crd.SetAPIVersion("apiextensions.k8s.io/v1")
		crd.SetKind("CustomResourceDefinition")
		g.Expect(c.Get(ctx, client.ObjectKey{Name: "machinedeployments.cluster.x-k8s.io"}, crd)).To(Succeed())
		g.Expect(crd.GetLabels()).To(HaveKeyWithValue("clusterctl.cluster.x-k8s.io", ""))
		g.Expect(crd.GetLabels()).To(HaveKeyWithValue("cluster.x-k8s.io/v1beta2", "v1beta2"))
		g.Expect(c.Get(ctx, client.ObjectKey{Name: "helmreleases.helm.toolkit.fluxcd.io"}, crd)).To(Succeed())
	})
}

// TestTwoControlPlanes proves two environments run side by side and are
// independent, as the e2e pivot (bootstrap and management) needs.
func TestTwoControlPlanes(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	a, err := testenv.Start("bootstrap")
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { g.Expect(a.Stop()).To(Succeed()) })
	b, err := testenv.Start("management")
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { g.Expect(b.Stop()).To(Succeed()) })
	g.Expect(a.Config.Host).NotTo(Equal(b.Config.Host))

	cm := obj(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: only-in-bootstrap, namespace: default}}`)
	g.Expect(a.Client.Create(ctx, cm)).To(Succeed())
	err = b.Client.Get(ctx, client.ObjectKeyFromObject(cm), cm.DeepCopy())
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "got %v", err)
	g.Expect(a.KubeConfigPath).To(BeAnExistingFile())
	g.Expect(b.KubeConfigPath).To(BeAnExistingFile())
}
