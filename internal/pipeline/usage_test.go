package pipeline

import (
	"context"
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	. "github.com/onsi/gomega"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/plan"
	"github.com/templatedrift/template-drift-controller/internal/release"
	"github.com/templatedrift/template-drift-controller/internal/target"
)

// TestGatherNamesKindsFirst: gatherLive names every kind of the release
// before its first read, with the kinds gatherUse lists next (MachinePool
// here, which the release has no object of), and gatherUse every kind it
// lists before its first list, so their watches start together instead of
// one after another.
func TestGatherNamesKindsFirst(t *testing.T) {
	g := NewWithT(t)
	v1beta2 := func(group string) schema.GroupVersion { return schema.GroupVersion{Group: group, Version: "v1beta2"} }
	mapper := apimeta.NewDefaultRESTMapper([]schema.GroupVersion{v1beta2("cluster.x-k8s.io"), v1beta2("infrastructure.cluster.x-k8s.io")})
	for _, gk := range append(manifest.UserKinds(), schema.GroupKind{Group: "cluster.x-k8s.io", Kind: "Cluster"},
		schema.GroupKind{Group: "infrastructure.cluster.x-k8s.io", Kind: "Metal3MachineTemplate"}) {
		mapper.Add(v1beta2(gk.Group).WithKind(gk.Kind), apimeta.RESTScopeNamespace)
	}
	empty := fake.NewClientBuilder().WithRESTMapper(mapper).Build()
	var seen []schema.GroupVersionKind
	targets := &target.Targets{Local: &rest.Config{Host: "https://127.0.0.1:1"}, Mapper: mapper,
		Cached: &target.CachedReader{Cache: empty, Live: empty, Kinds: map[schema.GroupKind]bool{}},
		Notice: func(gvk schema.GroupVersionKind) { seen = append(seen, gvk) }}
	tg, err := targets.For(context.Background(), &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Name: "cluster", Namespace: "fleet"}})
	g.Expect(err).NotTo(HaveOccurred())
	obj := func(kind, group string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(v1beta2(group).WithKind(kind))
		u.SetNamespace("fleet")
		u.SetName("mgmt")
		return u
	}
	cluster := obj("Cluster", "cluster.x-k8s.io")
	p := &pass{target: tg, rel: &release.Release{Name: "cluster", Namespace: "fleet", Version: 1}, objs: manifest.Objects{
		Clusters:  []*unstructured.Unstructured{cluster},
		Templates: []*unstructured.Unstructured{obj("Metal3MachineTemplate", "infrastructure.cluster.x-k8s.io")},
		Consumers: []*unstructured.Unstructured{obj("MachineDeployment", "cluster.x-k8s.io")},
	}}

	g.Expect(p.gatherLive(context.Background(), &plan.Facts{})).To(Succeed())
	kinds := []schema.GroupVersionKind{cluster.GroupVersionKind(), p.objs.Templates[0].GroupVersionKind(), p.objs.Consumers[0].GroupVersionKind()}
	mp := v1beta2("cluster.x-k8s.io").WithKind("MachinePool")
	g.Expect(seen[:3]).To(Equal(kinds), "the release's kinds named first")
	g.Expect(seen[3:len(seen)-3]).To(ContainElement(mp), "with the other kinds a pass lists next, before the first read: %v", seen)
	g.Expect(seen[len(seen)-3:]).To(Equal(kinds), "then read")

	seen = nil
	_, err = p.gatherUse(context.Background())
	g.Expect(err).NotTo(HaveOccurred())
	half := len(seen) / 2
	g.Expect(seen[:half]).To(ContainElement(mp), "named before the first list: %v", seen)
	g.Expect(seen[:half]).To(Equal(seen[half:]), "every kind named, then listed")
}
