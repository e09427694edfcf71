package manifest

import (
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/templatedrift/template-drift-controller/internal/diff"
)

// TestReferencesOfUsers: holders have references too (they make a template
// in use), but are never consumers, and never repointed; a MachinePool is a
// consumer that rolls machines.
func TestReferencesOfUsers(t *testing.T) {
	m3mt := ID{GroupKind: Metal3MachineTemplateKind, Namespace: "ns", Name: "cp"}
	data := ID{GroupKind: Metal3DataTemplateKind, Namespace: "ns", Name: "cp-data"}
	cases := []struct {
		name     string // the user's shape
		user     string // the object
		refs     []Ref  // its references, in table order
		consumer bool   // IsConsumer
		rolls    bool   // RollsMachines
	}{{
		name: "MachineSet: the MachineDeployment's paths",
		user: `{apiVersion: cluster.x-k8s.io/v1beta2, kind: MachineSet, metadata: {name: ms, namespace: ns},
			spec: {template: {spec: {infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: Metal3MachineTemplate, name: cp}}}}}`,
		refs: []Ref{{Pointer: "/spec/template/spec/infrastructureRef/name", Template: m3mt}},
	}, {
		name: "Metal3DataClaim: a name only, the kind implied",
		user: `{apiVersion: infrastructure.cluster.x-k8s.io/v1beta2, kind: Metal3DataClaim, metadata: {name: c, namespace: ns},
			spec: {template: {name: cp-data}}}`,
		refs: []Ref{{Pointer: "/spec/template/name", Template: data}},
	}, {
		name: "Metal3Data: the same shape",
		user: `{apiVersion: infrastructure.cluster.x-k8s.io/v1beta2, kind: Metal3Data, metadata: {name: d, namespace: ns},
			spec: {template: {name: cp-data, namespace: ns}}}`,
		refs: []Ref{{Pointer: "/spec/template/name", Template: data}},
	}, {
		name: "MachinePool: a consumer, which rolls machines",
		user: `{apiVersion: cluster.x-k8s.io/v1beta2, kind: MachinePool, metadata: {name: mp, namespace: ns},
			spec: {template: {spec: {infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: Metal3MachineTemplate, name: cp}}}}}`,
		refs:     []Ref{{Pointer: "/spec/template/spec/infrastructureRef/name", Template: m3mt}},
		consumer: true,
		rolls:    true,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			o := obj(t, tc.user)
			refs, err := References(o)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(refs).To(Equal(tc.refs))
			gk := o.GroupVersionKind().GroupKind()
			g.Expect(IsConsumer(gk)).To(Equal(tc.consumer))
			g.Expect(RollsMachines(gk)).To(Equal(tc.rolls))
			changes, err := Repoint(o, tc.refs[0].Template, "renamed")
			g.Expect(err).NotTo(HaveOccurred())
			if tc.consumer {
				g.Expect(changes).To(Equal([]diff.Change{{Path: tc.refs[0].Pointer, Op: diff.OpReplace, Before: tc.refs[0].Template.Name, After: "renamed"}}))
			} else {
				g.Expect(changes).To(BeEmpty(), "a holder is never repointed")
			}
		})
	}
}

func TestUserKinds(t *testing.T) {
	g := NewWithT(t)
	got := UserKinds()
	g.Expect(got).To(Equal([]schema.GroupKind{
		KubeadmControlPlaneKind, MachineDeploymentKind, MachinePoolKind, MachineSetKind,
		Metal3DataKind, Metal3DataClaimKind, Metal3MachineTemplateKind, RKE2ControlPlaneKind,
	}), "every consumer and holder, sorted by Kind.group")
	g.Expect(UserKinds()).To(Equal(got), "the same order every time")
}
