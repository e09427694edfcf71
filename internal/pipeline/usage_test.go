package pipeline

import (
	"testing"

	. "github.com/onsi/gomega"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/templatedrift/template-drift-controller/internal/apply"
	"github.com/templatedrift/template-drift-controller/internal/manifest"
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
