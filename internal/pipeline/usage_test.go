package pipeline

import (
	"context"
	"slices"
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	. "github.com/onsi/gomega"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/templatedrift/template-drift-controller/internal/apply"
	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/plan"
)

// TestOtherUserKinds: the kinds a pass names before its first read, for
// their watches to start with its release's own, are every kind that may
// use a template that no template or consumer of the release has, at the
// server's preferred version; a kind the server does not serve is left
// out, and the release's own kinds are named by Expect at their versions.
func TestOtherUserKinds(t *testing.T) {
	g := NewWithT(t)
	gv := func(group, version string) schema.GroupVersion {
		return schema.GroupVersion{Group: group, Version: version}
	}
	var preferred []schema.GroupVersion
	for _, group := range []string{"cluster.x-k8s.io", "controlplane.cluster.x-k8s.io", "infrastructure.cluster.x-k8s.io"} {
		preferred = append(preferred, gv(group, "v1beta2"))
	}
	mapper := apimeta.NewDefaultRESTMapper(preferred)
	served := map[string]schema.GroupVersion{}
	for _, gk := range manifest.UserKinds() {
		if gk.Kind == "RKE2ControlPlane" {
			continue // not served
		}
		served[gk.Kind] = gv(gk.Group, "v1beta2")
		mapper.Add(gk.WithVersion("v1beta2"), apimeta.RESTScopeNamespace)
	}
	c := fake.NewClientBuilder().WithRESTMapper(mapper).Build()
	obj := func(apiVersion, kind string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(apiVersion)
		u.SetKind(kind)
		return u
	}
	p := &pass{target: &apply.Target{Client: c}, objs: manifest.Objects{
		Templates: []*unstructured.Unstructured{obj("infrastructure.cluster.x-k8s.io/v1beta1", "Metal3MachineTemplate"), obj("infrastructure.cluster.x-k8s.io/v1beta1", "Metal3DataTemplate")},
		Consumers: []*unstructured.Unstructured{obj("cluster.x-k8s.io/v1beta1", "MachineDeployment"), obj("controlplane.cluster.x-k8s.io/v1beta1", "KubeadmControlPlane")},
	}}
	var want []schema.GroupVersionKind
	for _, gk := range manifest.UserKinds() {
		switch gk.Kind {
		case "RKE2ControlPlane", "Metal3MachineTemplate", "MachineDeployment", "KubeadmControlPlane":
			continue
		}
		want = append(want, served[gk.Kind].WithKind(gk.Kind))
	}
	g.Expect(want).To(ContainElement(schema.GroupVersionKind{Group: "cluster.x-k8s.io", Version: "v1beta2", Kind: "MachinePool"}))
	g.Expect(p.otherUserKinds()).To(Equal(want))
}

// TestGatherLiveNamesOtherKindsFirst: gatherLive names the kinds that may
// use a template and that the release has no object of (MachinePool here)
// before its first read, so their watches start with the release's own
// instead of one after another when the pass later lists them.
func TestGatherLiveNamesOtherKindsFirst(t *testing.T) {
	g := NewWithT(t)
	v1beta2 := func(group string) schema.GroupVersion { return schema.GroupVersion{Group: group, Version: "v1beta2"} }
	mapper := apimeta.NewDefaultRESTMapper([]schema.GroupVersion{v1beta2("cluster.x-k8s.io"), v1beta2("infrastructure.cluster.x-k8s.io")})
	for _, gk := range append(manifest.UserKinds(), schema.GroupKind{Group: "cluster.x-k8s.io", Kind: "Cluster"},
		schema.GroupKind{Group: "infrastructure.cluster.x-k8s.io", Kind: "Metal3MachineTemplate"}) {
		mapper.Add(v1beta2(gk.Group).WithKind(gk.Kind), apimeta.RESTScopeNamespace)
	}
	empty := fake.NewClientBuilder().WithRESTMapper(mapper).Build()
	var seen []schema.GroupVersionKind
	targets := &apply.Targets{Local: &rest.Config{Host: "https://127.0.0.1:1"}, Mapper: mapper,
		Cached: &apply.CachedReader{Cache: empty, Live: empty, Kinds: map[schema.GroupKind]bool{}},
		Notice: func(gvk schema.GroupVersionKind) { seen = append(seen, gvk) }}
	target, err := targets.For(context.Background(), &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Name: "cluster", Namespace: "fleet"}})
	g.Expect(err).NotTo(HaveOccurred())
	obj := func(kind, group string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(v1beta2(group).WithKind(kind))
		u.SetNamespace("fleet")
		u.SetName("mgmt")
		return u
	}
	cluster := obj("Cluster", "cluster.x-k8s.io")
	p := &pass{target: target, objs: manifest.Objects{
		Clusters:  []*unstructured.Unstructured{cluster},
		Templates: []*unstructured.Unstructured{obj("Metal3MachineTemplate", "infrastructure.cluster.x-k8s.io")},
		Consumers: []*unstructured.Unstructured{obj("MachineDeployment", "cluster.x-k8s.io")},
	}}

	g.Expect(p.gatherLive(context.Background(), &plan.Facts{})).To(Succeed())

	mp := v1beta2("cluster.x-k8s.io").WithKind("MachinePool")
	g.Expect(seen).To(ContainElement(mp))
	firstRead := slices.Index(seen[1:], cluster.GroupVersionKind()) + 1 // the Cluster's get, after Expect named it
	g.Expect(firstRead).To(BeNumerically(">", 0), "the Cluster is read: %v", seen)
	g.Expect(slices.Index(seen, mp)).To(BeNumerically("<", firstRead), "MachinePool named before the first read: %v", seen)
}
