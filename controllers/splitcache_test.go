package controllers

import (
	"testing"

	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/plan"
)

// namedCache stands for one informer cache; pick only returns it.
type namedCache struct {
	ctrlcache.Cache
	name string
}

// TestSplitCachePicks: the unstructured objects and lists of the kinds a
// release renders go to the narrowed cache; the holders, typed objects
// (RBAC) and metadata (Secrets, CRDs) to the whole one.
func TestSplitCachePicks(t *testing.T) {
	g := NewWithT(t)
	templates, err := manifest.ParseKinds(manifest.DefaultTemplateKinds)
	g.Expect(err).NotTo(HaveOccurred())
	whole, narrow := &namedCache{name: "whole"}, &namedCache{name: "narrow"}
	s := &splitCache{whole: whole, narrow: narrow,
		narrowed: func(gk schema.GroupKind) bool { return plan.Narrowable(gk, templates.Match(gk)) }}
	obj := func(apiVersion, kind string) runtime.Object {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(apiVersion)
		u.SetKind(kind)
		return u
	}
	list := func(apiVersion, kind string) runtime.Object {
		u := &unstructured.UnstructuredList{}
		u.SetAPIVersion(apiVersion)
		u.SetKind(kind + "List")
		return u
	}
	secretMeta := &metav1.PartialObjectMetadata{}
	secretMeta.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: "Secret"})
	cases := []struct {
		name string
		obj  runtime.Object
		want string
	}{
		{"a template", obj("infrastructure.cluster.x-k8s.io/v1beta1", "Metal3MachineTemplate"), "narrow"},
		{"a list of templates", list("infrastructure.cluster.x-k8s.io/v1beta1", "Metal3DataTemplate"), "narrow"},
		{"a consumer", obj("cluster.x-k8s.io/v1beta2", "MachineDeployment"), "narrow"},
		{"a Cluster", obj("cluster.x-k8s.io/v1beta2", "Cluster"), "narrow"},
		{"a MachineSet", obj("cluster.x-k8s.io/v1beta2", "MachineSet"), "whole"},
		{"a list of MachineSets", list("cluster.x-k8s.io/v1beta2", "MachineSet"), "whole"},
		{"a Metal3DataClaim", obj("infrastructure.cluster.x-k8s.io/v1beta1", "Metal3DataClaim"), "whole"},
		{"a Metal3Data", obj("infrastructure.cluster.x-k8s.io/v1beta1", "Metal3Data"), "whole"},
		{"Secret metadata", secretMeta, "whole"},
		{"a typed RBAC object", &rbacv1.RoleBinding{}, "whole"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			NewWithT(t).Expect(s.pick(tc.obj).(*namedCache).name).To(Equal(tc.want))
		})
	}
	g.Expect(s.pickKind(schema.GroupVersionKind{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta1", Kind: "Metal3MachineTemplate"}).(*namedCache).name).To(Equal("narrow"))
}
