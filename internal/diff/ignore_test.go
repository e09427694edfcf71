package diff

import (
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/kustomize"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func ignoreObject(apiVersion, kind, name string, labels map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: m{"apiVersion": apiVersion, "kind": kind}}
	u.SetName(name)
	u.SetNamespace("capi")
	u.SetLabels(labels)
	return u
}

func TestIgnorer(t *testing.T) {
	metal3 := ignoreObject("infrastructure.cluster.x-k8s.io/v1beta1", "Metal3MachineTemplate", "workers-v2", map[string]string{"tier": "workers"})
	rke2 := ignoreObject("controlplane.cluster.x-k8s.io/v1beta1", "RKE2ControlPlane", "cp", nil)
	cases := []struct {
		name  string                                  // what the case proves
		rules []helmv2.IgnoreRule                     // spec.driftDetection.ignore
		want  map[*unstructured.Unstructured][]string // expected PathsFor per object
	}{{
		// jsondiff.CompileIgnoreRules on the whole list would keep only the
		// last target-less rule (its result is keyed by the nil selector).
		name:  "rules without target apply to every object, all of them",
		rules: []helmv2.IgnoreRule{{Paths: []string{"/spec/a"}}, {Paths: []string{"/spec/b"}}},
		want:  map[*unstructured.Unstructured][]string{metal3: {"/spec/a", "/spec/b"}, rke2: {"/spec/a", "/spec/b"}},
	}, {
		name:  "paths keep rule order without duplicates",
		rules: []helmv2.IgnoreRule{{Paths: []string{"/spec/b", "/spec/a"}}, {Paths: []string{"/spec/a", "/spec/c"}, Target: &kustomize.Selector{Kind: "RKE2.*"}}},
		want:  map[*unstructured.Unstructured][]string{metal3: {"/spec/b", "/spec/a"}, rke2: {"/spec/b", "/spec/a", "/spec/c"}},
	}, {
		name:  "target by kind",
		rules: []helmv2.IgnoreRule{{Paths: []string{"/spec/k"}, Target: &kustomize.Selector{Kind: "Metal3MachineTemplate"}}},
		want:  map[*unstructured.Unstructured][]string{metal3: {"/spec/k"}, rke2: nil},
	}, {
		name:  "target by anchored name regex",
		rules: []helmv2.IgnoreRule{{Paths: []string{"/spec/n"}, Target: &kustomize.Selector{Name: "workers-v[0-9]+"}}, {Paths: []string{"/spec/x"}, Target: &kustomize.Selector{Name: "c"}}},
		want:  map[*unstructured.Unstructured][]string{metal3: {"/spec/n"}, rke2: nil},
	}, {
		name:  "target by label selector and group",
		rules: []helmv2.IgnoreRule{{Paths: []string{"/spec/l"}, Target: &kustomize.Selector{Group: "infrastructure.cluster.x-k8s.io", LabelSelector: "tier in (workers)"}}},
		want:  map[*unstructured.Unstructured][]string{metal3: {"/spec/l"}, rke2: nil},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			ig, err := NewIgnorer(tc.rules)
			g.Expect(err).NotTo(HaveOccurred())
			for o, want := range tc.want {
				g.Expect(ig.PathsFor(o)).To(Equal(want), o.GetKind())
			}
		})
	}
}

func TestIgnorerInvalidSelector(t *testing.T) {
	cases := []struct {
		name   string             // what the case proves
		target kustomize.Selector // invalid target
		want   string             // error text
	}{
		{name: "invalid name regex", target: kustomize.Selector{Name: "("}, want: "driftDetection.ignore[1]: failed to create ignore rule selector: invalid name regex"},
		{name: "invalid label selector", target: kustomize.Selector{LabelSelector: "a in (b"}, want: "invalid label selector"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			_, err := NewIgnorer([]helmv2.IgnoreRule{{Paths: []string{"/spec"}}, {Paths: []string{"/spec"}, Target: &tc.target}})
			g.Expect(err).To(MatchError(ContainSubstring(tc.want)))
		})
	}
}

func TestIgnorerNil(t *testing.T) {
	g := NewWithT(t)
	var ig *Ignorer
	g.Expect(ig.PathsFor(ignoreObject("v1", "T", "n", nil))).To(BeNil())
	empty, err := NewIgnorer(nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(empty.PathsFor(ignoreObject("v1", "T", "n", nil))).To(BeNil())
}

// TestIgnorerFeedsObject wires the two together the way the controller does.
func TestIgnorerFeedsObject(t *testing.T) {
	g := NewWithT(t)
	ig, err := NewIgnorer([]helmv2.IgnoreRule{{
		Paths:  []string{"/spec/template/spec/image/url"},
		Target: &kustomize.Selector{Kind: "Metal3MachineTemplate"},
	}})
	g.Expect(err).NotTo(HaveOccurred())
	desired := metal3Template("workers", "192.168.100.2", true)
	live := metal3Template("workers", "10.10.10.17", false)
	changes := Object(desired, live, Options{IgnorePaths: ig.PathsFor(desired)})
	g.Expect(changes).To(HaveLen(1))
	g.Expect(changes[0].Path).To(Equal("/spec/template/spec/image/checksum"))
}
