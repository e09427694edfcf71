package apply

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/templatedrift/template-drift-controller/internal/manifest"
)

// TestConfirmUnused: the fresh read before a delete stops the pass, as a
// conflict, when a user of a served kind names the template in its
// namespace; a user of another template, of another namespace, or a kind
// the server does not serve (MachinePool here) does not stop it.
func TestConfirmUnused(t *testing.T) {
	ms := schema.GroupVersionKind{Group: "cluster.x-k8s.io", Version: "v1beta2", Kind: "MachineSet"}
	mapper := apimeta.NewDefaultRESTMapper([]schema.GroupVersion{ms.GroupVersion()})
	mapper.Add(ms, apimeta.RESTScopeNamespace)
	machineSet := func(ns, name, template string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(ms)
		u.SetNamespace(ns)
		u.SetName(name)
		_ = unstructured.SetNestedMap(u.Object, map[string]any{
			"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "Metal3MachineTemplate", "name": template,
		}, "spec", "template", "spec", "infrastructureRef")
		return u
	}
	id := manifest.ID{GroupKind: manifest.Metal3MachineTemplateKind, Namespace: "fleet", Name: "workers-0a1b2c3d4e"}
	users := []schema.GroupKind{manifest.MachineSetKind, manifest.MachinePoolKind}
	cases := []struct {
		name    string
		objects []*unstructured.Unstructured
		inUse   bool
	}{
		{name: "no user", inUse: false},
		{name: "a MachineSet of another template, and one of another namespace", inUse: false,
			objects: []*unstructured.Unstructured{machineSet("fleet", "md-a", "workers"), machineSet("other", "md-b", id.Name)}},
		{name: "a MachineSet made since the pass read", inUse: true,
			objects: []*unstructured.Unstructured{machineSet("fleet", "md-c", id.Name)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			b := fake.NewClientBuilder().WithRESTMapper(mapper)
			for _, o := range tc.objects {
				b = b.WithObjects(o)
			}
			w := &writer{c: b.Build()}
			err := w.confirmUnused(context.Background(), id, users)
			if tc.inUse {
				g.Expect(err).To(MatchError(ErrConflict))
				g.Expect(err.Error()).To(ContainSubstring("MachineSet md-c"))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
		})
	}
}
