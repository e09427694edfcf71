package target

import (
	"context"
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/meta"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// nopReader answers every read with nothing.
type nopReader struct{}

func (nopReader) Get(context.Context, client.ObjectKey, client.Object, ...client.GetOption) error {
	return nil
}

func (nopReader) List(context.Context, client.ObjectList, ...client.ListOption) error { return nil }

// TestTargetsNoticeReads: every read of an object kind on the local
// cluster, cached or as an impersonated identity, tells Notice its kind
// and version (a list by its item kind), so the controller can watch it;
// typed reads (Secrets) tell nothing, and a spec.kubeConfig target never
// does: the controller watches only its own cluster. GetEach tells every
// kind it is given before its first read.
func TestTargetsNoticeReads(t *testing.T) {
	g := NewWithT(t)
	var seen []schema.GroupVersionKind
	targets := &Targets{Local: &rest.Config{Host: "https://127.0.0.1:1"}, Cached: &CachedReader{Cache: nopReader{}, Live: nopReader{}, Kinds: map[schema.GroupKind]bool{{Group: "infrastructure.cluster.x-k8s.io", Kind: "Metal3MachineTemplate"}: true}},
		Notice: func(gvk schema.GroupVersionKind) { seen = append(seen, gvk) }}
	m3mt := schema.GroupVersionKind{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta1", Kind: "Metal3MachineTemplate"}

	local, err := targets.For(context.Background(), &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Name: "cluster", Namespace: "fleet"}})
	g.Expect(err).NotTo(HaveOccurred())
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(m3mt)
	g.Expect(local.Read().Get(context.Background(), client.ObjectKey{Namespace: "fleet", Name: "workers"}, u)).To(Succeed())
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(m3mt.GroupVersion().WithKind("Metal3MachineTemplateList"))
	g.Expect(local.Read().List(context.Background(), list)).To(Succeed())
	g.Expect(local.Read().Get(context.Background(), client.ObjectKey{Namespace: "fleet", Name: "s"}, &corev1.Secret{})).To(Succeed())
	g.Expect(seen).To(Equal([]schema.GroupVersionKind{m3mt, m3mt}))

	// GetEach tells the kinds it is about to read, before any read.
	seen = nil
	md := schema.GroupVersionKind{Group: "cluster.x-k8s.io", Version: "v1beta1", Kind: "MachineDeployment"}
	mdObj := &unstructured.Unstructured{}
	mdObj.SetGroupVersionKind(md)
	_, err = local.GetEach(context.Background(), []*unstructured.Unstructured{u, mdObj})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(seen).To(Equal([]schema.GroupVersionKind{m3mt, md, m3mt, md}))

	seen = nil
	tenant, err := targets.For(context.Background(), &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Name: "cluster", Namespace: "tenant"},
		Spec: helmv2.HelmReleaseSpec{ServiceAccountName: "deployer"}})
	g.Expect(err).NotTo(HaveOccurred())
	_ = tenant.Read().Get(context.Background(), client.ObjectKey{Namespace: "tenant", Name: "workers"}, u) // no server: only the notice counts
	g.Expect(seen).To(Equal([]schema.GroupVersionKind{m3mt}))

	targets.Reader = fake.NewClientBuilder().WithObjects(&corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "fleet", Name: "workload-kubeconfig"}, Data: map[string][]byte{"value": []byte(unreachableKubeConfig)}}).Build()
	remote, err := targets.For(context.Background(), &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Name: "remote", Namespace: "fleet"},
		Spec: helmv2.HelmReleaseSpec{KubeConfig: &meta.KubeConfigReference{SecretRef: &meta.SecretKeyReference{Name: "workload-kubeconfig"}}}})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(remote.Remote).To(BeTrue())
	seen = nil
	_ = remote.Read().Get(context.Background(), client.ObjectKey{Namespace: "fleet", Name: "workers"}, u)
	remote.expect([]schema.GroupVersionKind{m3mt, md})
	g.Expect(seen).To(BeEmpty())
}
