package plan_test

import (
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/plan"
)

func TestNarrowable(t *testing.T) {
	infra := func(kind string) schema.GroupKind {
		return schema.GroupKind{Group: "infrastructure.cluster.x-k8s.io", Kind: kind}
	}
	tests := []struct {
		name       string
		gk         schema.GroupKind
		isTemplate bool
		want       bool
	}{
		{name: "a template kind", gk: infra("Metal3DataTemplate"), isTemplate: true, want: true},
		{name: "a template kind that is also a consumer", gk: manifest.Metal3MachineTemplateKind, isTemplate: true, want: true},
		{name: "a consumer", gk: manifest.MachineDeploymentKind, want: true},
		{name: "a control plane", gk: manifest.KubeadmControlPlaneKind, want: true},
		{name: "a Cluster", gk: manifest.ClusterKind, want: true},
		{name: "a MachineSet: Cluster API makes it", gk: manifest.MachineSetKind},
		{name: "a Metal3DataClaim: CAPM3 makes it", gk: manifest.Metal3DataClaimKind},
		{name: "a Metal3Data: CAPM3 makes it", gk: manifest.Metal3DataKind},
		{name: "a holder even if --template-kinds matched it", gk: manifest.Metal3DataKind, isTemplate: true},
		{name: "any other kind", gk: schema.GroupKind{Kind: "ConfigMap"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(plan.Narrowable(tt.gk, tt.isTemplate)).To(Equal(tt.want))
		})
	}
}

func TestUnlistedLineage(t *testing.T) {
	m3mt, m3dt := manifest.Metal3MachineTemplateKind, schema.GroupKind{Group: "infrastructure.cluster.x-k8s.io", Kind: "Metal3DataTemplate"}
	kinds := map[schema.GroupKind]bool{m3mt: true, m3dt: true}
	md := func(infra string) *unstructured.Unstructured {
		return fromYAML(t, `
apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineDeployment
metadata: {name: workers, namespace: mgmt}
spec:
  template:
    spec:
      infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: Metal3MachineTemplate, name: `+infra+`}
`)
	}
	crossNamespace := md("x")
	if err := unstructured.SetNestedField(crossNamespace.Object, "elsewhere", "spec", "template", "spec", "infrastructureRef", "namespace"); err != nil {
		t.Fatal(err)
	}
	m3mtUsing := func(name, data string, ann map[string]string) *unstructured.Unstructured {
		o := fromYAML(t, `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: Metal3MachineTemplate
metadata: {name: `+name+`, namespace: mgmt}
spec: {template: {spec: {dataTemplate: {name: `+data+`}}}}
`)
		o.SetAnnotations(ann)
		return o
	}
	replacement := m3mtUsing("workers-5f1c2a9b0d", "workers-data", map[string]string{api.ReplacesAnnotation: "workers"})
	tests := []struct {
		name   string
		objs   []*unstructured.Unstructured
		listed []manifest.ID
		kinds  map[schema.GroupKind]bool // the release's template kinds; all when nil
		want   []manifest.ID
	}{
		{name: "a consumer's template that was listed: nothing to read",
			objs: []*unstructured.Unstructured{md("workers")}, listed: []manifest.ID{id(m3mt, "mgmt", "workers")}},
		{name: "a consumer pointing at a replacement the list missed",
			objs: []*unstructured.Unstructured{md("workers-5f1c2a9b0d")}, listed: []manifest.ID{id(m3mt, "mgmt", "workers")},
			want: []manifest.ID{id(m3mt, "mgmt", "workers-5f1c2a9b0d")}},
		{name: "a replacement read: its original and the data template it uses, when missed",
			objs: []*unstructured.Unstructured{replacement},
			want: []manifest.ID{id(m3dt, "mgmt", "workers-data"), id(m3mt, "mgmt", "workers")}},
		{name: "a replacement whose original was listed",
			objs: []*unstructured.Unstructured{replacement}, listed: []manifest.ID{id(m3mt, "mgmt", "workers"), id(m3dt, "mgmt", "workers-data")}},
		{name: "each once, whoever names it",
			objs: []*unstructured.Unstructured{md("workers-5f1c2a9b0d"), md("workers-5f1c2a9b0d"), nil},
			want: []manifest.ID{id(m3mt, "mgmt", "workers-5f1c2a9b0d")}},
		{name: "kinds the pass does not list are not read",
			objs: []*unstructured.Unstructured{m3mtUsing("a", "data", nil)}, kinds: map[schema.GroupKind]bool{m3mt: true}},
		{name: "a reference into another namespace is left to the pass that reads the consumer",
			objs: []*unstructured.Unstructured{crossNamespace}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			listed := map[manifest.ID]bool{}
			for _, l := range tt.listed {
				listed[l] = true
			}
			k := kinds
			if tt.kinds != nil {
				k = tt.kinds
			}
			NewWithT(t).Expect(plan.UnlistedLineage(tt.objs, listed, k)).To(Equal(tt.want))
		})
	}
}
