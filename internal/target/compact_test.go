package target

import (
	"encoding/json"
	"testing"
	"unsafe"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/templatedrift/template-drift-controller/internal/packed"
)

// TestCompactRoundTrip: a template compacted and expanded is the object it
// was, whole numbers as int64 as the API server's objects decode them; a
// deep copy of a compact object (what the informer hands a read) expands
// without touching the one it was copied from; compacting twice changes
// nothing; an object that is not compact is left as it is.
func TestCompactRoundTrip(t *testing.T) {
	g := NewWithT(t)
	obj := func() *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "Metal3MachineTemplate",
			"metadata": map[string]any{"name": "mgmt-md0", "namespace": "fleet", "resourceVersion": "12",
				"annotations": map[string]any{"meta.helm.sh/release-name": "cluster"}},
			"spec": map[string]any{"nodeReuse": false, "template": map[string]any{"spec": map[string]any{
				"image":        map[string]any{"url": "http://mgmt/img", "checksum": "abc", "checksumType": "sha256"},
				"dataTemplate": map[string]any{"name": "mgmt-md0-metadata"},
				"hostSelector": map[string]any{"matchLabels": map[string]any{"role": "worker"}},
				"ports":        []any{int64(1), int64(2)}, "ratio": 0.5}}},
			"status": map[string]any{"lastUpdated": "2026-12-03T10:00:00Z"},
		}}
	}
	c, err := Compact(obj())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(c.Object).To(HaveLen(4), "apiVersion, kind, metadata and the content")
	g.Expect(c.GetResourceVersion()).To(Equal("12"))
	rest, err := json.Marshal(map[string]any{"spec": obj().Object["spec"], "status": obj().Object["status"],
		"metadata": map[string]any{"annotations": map[string]any{"meta.helm.sh/release-name": "cluster"}}})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(len(c.Object[compactField].(string))).To(BeNumerically("<", len(rest)), "the content is compressed")
	again, err := Compact(c)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(again).To(BeIdenticalTo(c))

	read := c.DeepCopy()
	g.Expect(Expand(read)).To(Succeed())
	g.Expect(read.Object).To(Equal(obj().Object))
	g.Expect(c.Object).To(HaveKey(compactField), "the cache's copy stays compact")

	plain := obj()
	g.Expect(Expand(plain)).To(Succeed())
	g.Expect(plain.Object).To(Equal(obj().Object))

	broken := c.DeepCopy()
	broken.Object[compactField] = "{"
	g.Expect(Expand(broken)).To(MatchError(ContainSubstring("Metal3MachineTemplate fleet/mgmt-md0")), "content that does not inflate")
	notJSON, err := packed.DeflateSized("{")
	g.Expect(err).NotTo(HaveOccurred())
	broken.Object[compactField] = notJSON
	g.Expect(Expand(broken)).To(MatchError(ContainSubstring("Metal3MachineTemplate fleet/mgmt-md0")), "content that is not JSON")
}

// TestCompactMetadata: whatever annotations an object has (none, an empty
// map, Helm's only, others only, both), Compact keeps decoded its key and
// its version alone, with its Helm release as one string, which HelmOwner
// reads as it reads the annotations of an object that is not compact; and
// Expand gives back its metadata as it was.
func TestCompactMetadata(t *testing.T) {
	helm := map[string]any{"meta.helm.sh/release-name": "cluster", "meta.helm.sh/release-namespace": "fleet"}
	other := map[string]any{"cluster.x-k8s.io/paused": "", "note": "kept"}
	both := map[string]any{"meta.helm.sh/release-name": "cluster", "meta.helm.sh/release-namespace": "fleet", "note": "kept"}
	tests := []struct {
		name        string
		annotations any
		owned       bool
	}{
		{"no annotations", nil, false},
		{"an empty map", map[string]any{}, false},
		{"Helm's only", helm, true},
		{"others only", other, false},
		{"both", both, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			md := map[string]any{"name": "mgmt-md0", "namespace": "fleet", "resourceVersion": "9", "uid": "u1",
				"labels":          map[string]any{"app.kubernetes.io/managed-by": "Helm"},
				"ownerReferences": []any{map[string]any{"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster", "name": "mgmt", "uid": "c1"}}}
			if tt.annotations != nil {
				md["annotations"] = tt.annotations
			}
			obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Thing", "metadata": md,
				"spec": map[string]any{"a": int64(1)}}}
			whole := obj.DeepCopy()
			c, err := Compact(obj)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(obj.Object).To(Equal(whole.Object), "the object compacted is not changed")
			want := map[string]any{"name": "mgmt-md0", "namespace": "fleet", "resourceVersion": "9"}
			g.Expect(c.Object["metadata"]).To(Equal(want))
			wantName, wantNS := HelmOwner(whole)
			g.Expect(wantName != "").To(Equal(tt.owned))
			name, ns := HelmOwner(c)
			g.Expect([]string{name, ns}).To(Equal([]string{wantName, wantNS}), "the owner of the compact object is the object's")
			read := c.DeepCopy()
			g.Expect(Expand(read)).To(Succeed())
			g.Expect(read.Object).To(Equal(whole.Object))
			g.Expect(c.Object["metadata"]).To(Equal(want), "expanding a copy leaves the cache's object as it was")

			// Two objects decoded apart (as the informer decodes each) share
			// the strings of their apiVersion and kind once compact.
			js, err := whole.MarshalJSON()
			g.Expect(err).NotTo(HaveOccurred())
			decoded := func() *unstructured.Unstructured {
				u := &unstructured.Unstructured{}
				g.Expect(u.UnmarshalJSON(js)).To(Succeed())
				return u
			}
			a, b := decoded(), decoded()
			g.Expect(unsafe.StringData(a.GetKind())).NotTo(BeIdenticalTo(unsafe.StringData(b.GetKind())), "decoded apart")
			ca, err := Compact(a)
			g.Expect(err).NotTo(HaveOccurred())
			cb, err := Compact(b)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(unsafe.StringData(ca.GetAPIVersion())).To(BeIdenticalTo(unsafe.StringData(cb.GetAPIVersion())), "apiVersion shared")
			g.Expect(unsafe.StringData(ca.GetKind())).To(BeIdenticalTo(unsafe.StringData(cb.GetKind())), "kind shared")
		})
	}
}

// BenchmarkCompact: what an informer event costs (Compact) and what a
// pass's read of a compact object costs (a deep copy and Expand), for a
// Metal3MachineTemplate like the benchmark's fleet.
func BenchmarkCompact(b *testing.B) {
	template := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "Metal3MachineTemplate",
		"metadata": map[string]any{"name": "mgmt-md0", "namespace": "fleet-0001", "resourceVersion": "12", "uid": "2b6f3a55-5d0e-4c65-9d3c-1b7f0f8c9e21",
			"labels":      map[string]any{"app.kubernetes.io/managed-by": "Helm", "helm.toolkit.fluxcd.io/name": "c0001", "helm.toolkit.fluxcd.io/namespace": "fleet-0001"},
			"annotations": map[string]any{"meta.helm.sh/release-name": "c0001", "meta.helm.sh/release-namespace": "fleet-0001"}},
		"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
			"image":        map[string]any{"url": "http://192.168.100.2/images/ubuntu.qcow2", "checksum": "http://192.168.100.2/images/ubuntu.qcow2.sha256sum", "checksumType": "sha256", "format": "qcow2"},
			"dataTemplate": map[string]any{"name": "mgmt-md0-metadata"}}}},
	}}
	b.Run("Compact", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Compact(template); err != nil {
				b.Fatal(err)
			}
		}
	})
	c, err := Compact(template)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("Expand", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := Expand(c.DeepCopy()); err != nil {
				b.Fatal(err)
			}
		}
	})
}
