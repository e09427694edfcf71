package manifest

import (
	"errors"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/templatedrift/template-drift-controller/internal/diff"
)

func obj(t testing.TB, y string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(y), &u.Object); err != nil {
		t.Fatalf("bad fixture: %v", err)
	}
	return u
}

func TestParseKinds(t *testing.T) {
	cases := []struct {
		name    string   // what the case shows
		specs   []string // --template-kinds
		match   []string // group/kind that must match
		noMatch []string // group/kind that must not match
		err     string   // expected error fragment, "" for none
	}{
		{name: "defaults", specs: DefaultTemplateKinds,
			match: []string{"infrastructure.cluster.x-k8s.io/Metal3MachineTemplate", "infrastructure.cluster.x-k8s.io/Metal3DataTemplate",
				"infrastructure.cluster.x-k8s.io/DockerMachineTemplate", "bootstrap.cluster.x-k8s.io/KubeadmConfigTemplate"},
			noMatch: []string{"cluster.x-k8s.io/MachineDeployment", "infrastructure.cluster.x-k8s.io/Metal3Machine",
				"controlplane.cluster.x-k8s.io/KubeadmControlPlaneTemplate", "infrastructure.cluster.x-k8s.io.evil/Metal3MachineTemplate"}},
		{name: "exact kind", specs: []string{"infrastructure.cluster.x-k8s.io/Metal3MachineTemplate"},
			match: []string{"infrastructure.cluster.x-k8s.io/Metal3MachineTemplate"}, noMatch: []string{"infrastructure.cluster.x-k8s.io/Metal3DataTemplate"}},
		{name: "empty list", specs: nil, err: "empty"},
		{name: "no group", specs: []string{"Metal3MachineTemplate"}, err: "want group/KindPattern"},
		{name: "bad glob", specs: []string{"infrastructure.cluster.x-k8s.io/[Metal3"}, err: "syntax error"},
		{name: "extra slash", specs: []string{"a/b/c"}, err: "want group/KindPattern"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			m, err := ParseKinds(tc.specs)
			if tc.err != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tc.err)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			for _, s := range tc.match {
				gr, k, _ := strings.Cut(s, "/")
				g.Expect(m.Match(schema.GroupKind{Group: gr, Kind: k})).To(BeTrue(), s)
			}
			for _, s := range tc.noMatch {
				gr, k, _ := strings.Cut(s, "/")
				g.Expect(m.Match(schema.GroupKind{Group: gr, Kind: k})).To(BeFalse(), s)
			}
		})
	}
}

func TestSplit(t *testing.T) {
	g := NewWithT(t)
	manifest := `---
# Source: c/templates/b.yaml
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: Metal3MachineTemplate
metadata: {name: b}
---
# Source: c/templates/a.yaml
apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineDeployment
metadata: {name: a, namespace: other}
---
# an empty document
---
`
	objs, err := Split(manifest, "rel-ns", 0)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(objs).To(HaveLen(2))
	g.Expect(objs[0].GetKind()).To(Equal("MachineDeployment"), "ordered by kind/namespace/name")
	g.Expect(objs[0].GetNamespace()).To(Equal("other"), "an explicit namespace is kept")
	g.Expect(objs[1].GetNamespace()).To(Equal("rel-ns"), "the namespace defaults to the release namespace")

	_, err = Split(manifest, "ns", 10)
	g.Expect(errors.Is(err, ErrManifestTooLarge)).To(BeTrue())
	for _, bad := range []string{"kind: [unclosed", "apiVersion: v1\nmetadata: {name: x}", "apiVersion: v1\nkind: ConfigMap\nmetadata: {}", "- a\n- b"} {
		_, err = Split(bad, "ns", 0)
		g.Expect(errors.Is(err, ErrManifestInvalid)).To(BeTrue(), "%q: %v", bad, err)
	}
}

func TestReferencesAndRepoint(t *testing.T) {
	m3mt := ID{GroupKind: schema.GroupKind{Group: "infrastructure.cluster.x-k8s.io", Kind: "Metal3MachineTemplate"}, Namespace: "ns", Name: "cp"}
	cases := []struct {
		name     string   // consumer shape
		consumer string   // the consumer object
		pointers []string // JSON pointers Repoint must change, in order
	}{
		{name: "MachineDeployment v1beta2", consumer: `{apiVersion: cluster.x-k8s.io/v1beta2, kind: MachineDeployment, metadata: {name: md, namespace: ns},
			spec: {template: {spec: {infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: Metal3MachineTemplate, name: cp},
			bootstrap: {configRef: {apiGroup: bootstrap.cluster.x-k8s.io, kind: KubeadmConfigTemplate, name: cp}}}}}}`,
			pointers: []string{"/spec/template/spec/infrastructureRef/name"}},
		{name: "MachineDeployment v1beta1", consumer: `{apiVersion: cluster.x-k8s.io/v1beta1, kind: MachineDeployment, metadata: {name: md, namespace: ns},
			spec: {template: {spec: {infrastructureRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: Metal3MachineTemplate, name: cp}}}}}`,
			pointers: []string{"/spec/template/spec/infrastructureRef/name"}},
		{name: "KubeadmControlPlane v1beta1", consumer: `{apiVersion: controlplane.cluster.x-k8s.io/v1beta1, kind: KubeadmControlPlane, metadata: {name: k, namespace: ns},
			spec: {machineTemplate: {infrastructureRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: Metal3MachineTemplate, name: cp}}}}`,
			pointers: []string{"/spec/machineTemplate/infrastructureRef/name"}},
		{name: "KubeadmControlPlane v1beta2", consumer: `{apiVersion: controlplane.cluster.x-k8s.io/v1beta2, kind: KubeadmControlPlane, metadata: {name: k, namespace: ns},
			spec: {machineTemplate: {spec: {infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: Metal3MachineTemplate, name: cp}}}}}`,
			pointers: []string{"/spec/machineTemplate/spec/infrastructureRef/name"}},
		{name: "RKE2ControlPlane v1beta1, both fields", consumer: `{apiVersion: controlplane.cluster.x-k8s.io/v1beta1, kind: RKE2ControlPlane, metadata: {name: r, namespace: ns},
			spec: {infrastructureRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: Metal3MachineTemplate, name: cp},
			machineTemplate: {infrastructureRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: Metal3MachineTemplate, name: cp}}}}`,
			pointers: []string{"/spec/infrastructureRef/name", "/spec/machineTemplate/infrastructureRef/name"}},
		{name: "other kind with same name is left alone", consumer: `{apiVersion: controlplane.cluster.x-k8s.io/v1beta2, kind: KubeadmControlPlane, metadata: {name: k, namespace: ns},
			spec: {machineTemplate: {spec: {infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: DockerMachineTemplate, name: cp}}}}}`},
		{name: "MachineSet is never edited", consumer: `{apiVersion: cluster.x-k8s.io/v1beta2, kind: MachineSet, metadata: {name: ms, namespace: ns},
			spec: {template: {spec: {infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: Metal3MachineTemplate, name: cp}}}}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			o := obj(t, tc.consumer)
			changes, err := Repoint(o, m3mt, "cp-0123456789")
			g.Expect(err).NotTo(HaveOccurred())
			var got []string
			for _, c := range changes {
				got = append(got, c.Path)
				g.Expect(c.Op).To(Equal(diff.OpReplace))
				g.Expect(c.Before).To(Equal("cp"))
				g.Expect(c.After).To(Equal("cp-0123456789"))
			}
			g.Expect(got).To(Equal(tc.pointers))
			if len(changes) > 0 {
				patched, err := diff.Apply(o, changes)
				g.Expect(err).NotTo(HaveOccurred())
				again, err := Repoint(patched, m3mt, "cp-0123456789")
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(again).To(BeEmpty(), "repointing is idempotent")
			}
		})
	}
}

func TestReferencesImpliedAndCrossNamespace(t *testing.T) {
	g := NewWithT(t)
	m3mt := obj(t, `{apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: Metal3MachineTemplate, metadata: {name: w, namespace: ns},
		spec: {template: {spec: {dataTemplate: {name: w-meta}}}}}`)
	refs, err := References(m3mt)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(refs).To(ConsistOf(Ref{Pointer: "/spec/template/spec/dataTemplate/name",
		Template: ID{GroupKind: Metal3DataTemplateKind, Namespace: "ns", Name: "w-meta"}}))

	g.Expect(unstructured.SetNestedField(m3mt.Object, "elsewhere", "spec", "template", "spec", "dataTemplate", "namespace")).To(Succeed())
	_, err = References(m3mt)
	g.Expect(errors.Is(err, ErrCrossNamespaceRef)).To(BeTrue())
	g.Expect(unstructured.SetNestedField(m3mt.Object, "ns", "spec", "template", "spec", "dataTemplate", "namespace")).To(Succeed())
	_, err = References(m3mt)
	g.Expect(err).NotTo(HaveOccurred(), "the object's own namespace is fine")
}

func TestSortByRoleOrdersReferencedFirst(t *testing.T) {
	g := NewWithT(t)
	kinds, _ := ParseKinds(DefaultTemplateKinds)
	objs := []*unstructured.Unstructured{
		obj(t, `{apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: Metal3MachineTemplate, metadata: {name: a, namespace: ns}, spec: {template: {spec: {dataTemplate: {name: z}}}}}`),
		obj(t, `{apiVersion: cluster.x-k8s.io/v1beta2, kind: MachineDeployment, metadata: {name: md, namespace: ns}}`),
		obj(t, `{apiVersion: cluster.x-k8s.io/v1beta2, kind: MachineSet, metadata: {name: ms, namespace: ns}}`),
		obj(t, `{apiVersion: cluster.x-k8s.io/v1beta2, kind: Cluster, metadata: {name: c, namespace: ns}}`),
		obj(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: cm, namespace: ns}}`),
		obj(t, `{apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: Metal3DataTemplate, metadata: {name: z, namespace: ns}}`),
	}
	c, err := SortByRole(objs, kinds)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(c.Templates).To(HaveLen(2))
	g.Expect(c.Templates[0].GetKind()).To(Equal("Metal3DataTemplate"), "the referenced data template comes first")
	g.Expect(c.Consumers).To(HaveLen(1))
	g.Expect(c.Consumers[0].GetKind()).To(Equal("MachineDeployment"))
	g.Expect(c.Clusters).To(HaveLen(1))
}

// TestPrepared: the prepared form gives Split's objects, in Split's order,
// value for value (numbers, escapes, nulls, non-string keys included), one
// object a line; an empty manifest prepares to nothing; a manifest Split
// refuses, Prepare refuses the same way; text Prepare did not make fails
// to decode with ErrManifestInvalid.
func TestPrepared(t *testing.T) {
	g := NewWithT(t)
	text := `---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: Metal3MachineTemplate
metadata: {name: workers}
spec: {a: 1.0, b: 1e21, c: 0.1, d: "<&>\n", e: ~, f: [1, "2", true], 3: x}
---
apiVersion: cluster.x-k8s.io/v1beta1
kind: Cluster
metadata: {name: c, namespace: other}
`
	want, err := Split(text, "rel-ns", 0)
	g.Expect(err).NotTo(HaveOccurred())
	p, err := Prepare(text, "rel-ns", 0)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(strings.Count(string(p), "\n")).To(Equal(2))
	got, err := p.Objects()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(Equal(want))
	g.Expect(got[1].GetNamespace()).To(Equal("rel-ns"))

	empty, err := Prepare("---\n", "ns", 0)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(empty).To(BeEmpty())

	_, err = Prepare("kind: [", "ns", 0)
	g.Expect(err).To(MatchError(ErrManifestInvalid))
	_, err = Prepare(text, "ns", 10)
	g.Expect(err).To(MatchError(ErrManifestTooLarge))
	_, err = Prepared("{\"kind\":").Objects()
	g.Expect(err).To(MatchError(ErrManifestInvalid))
}
