package diff

import (
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// metal3Template is a Metal3MachineTemplate as a chart renders it (manifest
// true) or as the API server returns it (manifest false: server-managed
// metadata, defaulted nodeReuse and an automatedCleaningMode set by CAPM3).
func metal3Template(name, imageHost string, manifest bool) *unstructured.Unstructured {
	tmpl := m{
		"dataTemplate": m{"name": name + "-data"},
		"hostSelector": m{"matchLabels": m{"pool": "workers"}},
		"image": m{
			"checksum":     "http://" + imageHost + "/images/ubuntu-24.04.qcow2.sha256sum",
			"checksumType": "sha256",
			"format":       "qcow2",
			"url":          "http://" + imageHost + "/images/ubuntu-24.04.qcow2",
		},
	}
	meta := m{"name": name, "namespace": "capi"}
	s := m{"template": m{"spec": tmpl}}
	if !manifest {
		tmpl["automatedCleaningMode"] = "metadata"
		s["nodeReuse"] = false
		meta["resourceVersion"] = "4711"
		meta["uid"] = "0b3c2c4e-5f2b-4d7e-9c61-7d0c4c1b2a11"
	}
	return &unstructured.Unstructured{Object: m{
		"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1",
		"kind":       "Metal3MachineTemplate",
		"metadata":   meta,
		"spec":       s,
	}}
}

func TestObjectMetal3MachineTemplate(t *testing.T) {
	g := NewWithT(t)
	desired := metal3Template("workers", "192.168.100.2", true)
	live := metal3Template("workers", "192.168.100.2", false)
	// Drift only the URL; the checksum still points at the manifest's host.
	live.Object["spec"].(m)["template"].(m)["spec"].(m)["image"].(m)["url"] = "http://10.10.10.17/images/ubuntu-24.04.qcow2"

	changes := Object(desired, live, Options{})

	g.Expect(changes).To(Equal([]Change{{
		Path:   "/spec/template/spec/image/url",
		Op:     OpReplace,
		Before: "http://10.10.10.17/images/ubuntu-24.04.qcow2",
		After:  "http://192.168.100.2/images/ubuntu-24.04.qcow2",
	}}))

	raw, err := Patch(changes, "4711")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(raw)).To(Equal(`[{"op":"replace","path":"/metadata/resourceVersion","value":"4711"},` +
		`{"op":"replace","path":"/spec/template/spec/image/url","value":"http://192.168.100.2/images/ubuntu-24.04.qcow2"}]`))

	healed, err := Apply(live, changes)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(Object(desired, healed, Options{})).To(BeEmpty())
	// The server defaults survive the correction.
	g.Expect(healed.Object["spec"].(m)["nodeReuse"]).To(Equal(false))
	g.Expect(healed.Object["spec"].(m)["template"].(m)["spec"].(m)["automatedCleaningMode"]).To(Equal("metadata"))
}
