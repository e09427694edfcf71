package plan_test

import (
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/plan"
)

// object is a Metal3MachineTemplate fleet/workers with the given labels and
// annotations.
func object(labels, annotations map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("infrastructure.cluster.x-k8s.io/v1beta1")
	u.SetKind("Metal3MachineTemplate")
	u.SetNamespace("fleet")
	u.SetName("workers")
	u.SetLabels(labels)
	u.SetAnnotations(annotations)
	return u
}

func TestOwnership(t *testing.T) {
	owned := map[string]string{api.HelmReleaseNameAnnotation: "cluster-a", api.HelmReleaseNamespaceAnnotation: "fleet"}
	with := func(m map[string]string, k, v string) map[string]string { return merge(m, map[string]string{k: v}) }
	const notOwned = "not owned by release fleet/cluster-a"

	cases := []struct {
		name string // what the case proves
		// manifestLabels and manifestAnnotations are the manifest object's.
		manifestLabels, manifestAnnotations map[string]string
		// noLive is true when the template is missing live.
		noLive bool
		// liveLabels and liveAnnotations are the live object's.
		liveLabels, liveAnnotations map[string]string
		// want is the reason to skip quietly, conflict the other release's
		// ownership; "" for none.
		want, conflict string
	}{{
		name:            "owned by the release, no opt-out: not skipped",
		liveAnnotations: owned,
	}, {
		name:                "our opt-out annotation on the manifest",
		manifestAnnotations: map[string]string{api.IgnoreAnnotation: "true"},
		liveAnnotations:     owned,
		want:                "opted out",
	}, {
		name:            "our opt-out label on the manifest",
		manifestLabels:  map[string]string{api.IgnoreAnnotation: "true"},
		liveAnnotations: owned,
		want:            "opted out",
	}, {
		name:            "our opt-out annotation on the live object",
		liveAnnotations: with(owned, api.IgnoreAnnotation, "true"),
		want:            "opted out",
	}, {
		name:            "our opt-out label on the live object",
		liveLabels:      map[string]string{api.IgnoreAnnotation: "true"},
		liveAnnotations: owned,
		want:            "opted out",
	}, {
		name:            "our opt-out set to anything but true is no opt-out",
		liveLabels:      map[string]string{api.IgnoreAnnotation: "false"},
		liveAnnotations: with(owned, api.IgnoreAnnotation, "yes"),
	}, {
		name:                "Flux drift detection disabled by annotation on the manifest",
		manifestAnnotations: map[string]string{api.FluxDriftDetectionKey: "disabled"},
		liveAnnotations:     owned,
		want:                "opted out",
	}, {
		name:            "Flux drift detection disabled by label on the live object",
		liveLabels:      map[string]string{api.FluxDriftDetectionKey: "disabled"},
		liveAnnotations: owned,
		want:            "opted out",
	}, {
		name:            "Flux drift detection disabled by annotation on the live object",
		liveAnnotations: with(owned, api.FluxDriftDetectionKey, "disabled"),
		want:            "opted out",
	}, {
		name:            "Flux drift detection enabled is no opt-out",
		liveAnnotations: with(owned, api.FluxDriftDetectionKey, "enabled"),
	}, {
		name:                "an opt-out on the manifest wins over a missing live object",
		manifestAnnotations: map[string]string{api.IgnoreAnnotation: "true"},
		noLive:              true,
		want:                "opted out",
	}, {
		name:            "an opt-out wins over a topology and another owner",
		liveLabels:      map[string]string{api.TopologyOwnedLabel: "", api.IgnoreAnnotation: "true"},
		liveAnnotations: map[string]string{api.HelmReleaseNameAnnotation: "other"},
		want:            "opted out",
	}, {
		name:            "owned by a ClusterClass topology, the label present with any value",
		liveLabels:      map[string]string{api.TopologyOwnedLabel: ""},
		liveAnnotations: owned,
		want:            "owned by a ClusterClass topology",
	}, {
		name:       "the topology wins over the release ownership",
		liveLabels: map[string]string{api.TopologyOwnedLabel: ""},
		want:       "owned by a ClusterClass topology",
	}, {
		name:            "live object of another release: a conflict, not a quiet skip",
		liveAnnotations: with(owned, api.HelmReleaseNameAnnotation, "cluster-b"),
		conflict:        "owned by release fleet/cluster-b",
	}, {
		name:            "live object of a release of the same name in another namespace",
		liveAnnotations: with(owned, api.HelmReleaseNamespaceAnnotation, "tenant-b"),
		conflict:        "owned by release tenant-b/cluster-a",
	}, {
		name:            "only a release name, of another release",
		liveAnnotations: map[string]string{api.HelmReleaseNameAnnotation: "cluster-b"},
		conflict:        "owned by release ?/cluster-b",
	}, {
		name:            "the topology wins over another release's ownership",
		liveLabels:      map[string]string{api.TopologyOwnedLabel: ""},
		liveAnnotations: with(owned, api.HelmReleaseNameAnnotation, "cluster-b"),
		want:            "owned by a ClusterClass topology",
	}, {
		name: "live object without Helm's ownership annotations",
		want: notOwned,
	}, {
		name:   "missing live object: not skipped (it is recreated)",
		noLive: true,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			m := object(tc.manifestLabels, tc.manifestAnnotations)
			var live *unstructured.Unstructured
			if !tc.noLive {
				live = object(tc.liveLabels, tc.liveAnnotations)
			}
			skip, conflict := plan.Ownership(m, live, "cluster-a", "fleet")
			g.Expect([]string{skip, conflict}).To(Equal([]string{tc.want, tc.conflict}))
			// SkipReason, for the gatherer, is either: whatever leaves the
			// object alone.
			g.Expect(plan.SkipReason(m, live, "cluster-a", "fleet")).To(Equal(tc.want + tc.conflict))
		})
	}
}

func TestPausedClusters(t *testing.T) {
	cluster := func(name, extra string) *unstructured.Unstructured {
		return fromYAML(t, `{apiVersion: cluster.x-k8s.io/v1beta1, kind: Cluster, metadata: {name: `+name+`, namespace: fleet`+extra+`}}`)
	}
	cases := []struct {
		name     string                       // what the case proves
		clusters []*unstructured.Unstructured // the live Clusters
		want     []string                     // the paused ones, "<ns>/<name>", in input order
	}{{
		name: "spec.paused",
		clusters: []*unstructured.Unstructured{fromYAML(t,
			`{apiVersion: cluster.x-k8s.io/v1beta1, kind: Cluster, metadata: {name: a, namespace: fleet}, spec: {paused: true}}`)},
		want: []string{"fleet/a"},
	}, {
		name:     "the paused annotation, whatever its value",
		clusters: []*unstructured.Unstructured{cluster("b", `, annotations: {`+api.ClusterPausedAnnotation+`: ""}`)},
		want:     []string{"fleet/b"},
	}, {
		name: "neither, or spec.paused false: not paused",
		clusters: []*unstructured.Unstructured{
			cluster("c", ""),
			fromYAML(t, `{apiVersion: cluster.x-k8s.io/v1beta1, kind: Cluster, metadata: {name: d, namespace: fleet}, spec: {paused: false}}`),
			cluster("e", `, annotations: {other: "true"}`),
		},
	}, {
		name: "several: only the paused ones, in order",
		clusters: []*unstructured.Unstructured{
			cluster("z", `, annotations: {`+api.ClusterPausedAnnotation+`: "true"}`),
			cluster("c", ""),
			fromYAML(t, `{apiVersion: cluster.x-k8s.io/v1beta1, kind: Cluster, metadata: {name: a, namespace: other}, spec: {paused: true}}`),
		},
		want: []string{"fleet/z", "other/a"},
	}, {
		name: "paused under the add-on's move block: a correction to finish, not a wait",
		clusters: []*unstructured.Unstructured{
			fromYAML(t, `{apiVersion: cluster.x-k8s.io/v1beta2, kind: Cluster, metadata: {name: ours, namespace: fleet, annotations: {`+
				api.BlockMoveAnnotation+`: `+api.ControllerName+`}}, spec: {paused: true}}`),
			fromYAML(t, `{apiVersion: cluster.x-k8s.io/v1beta2, kind: Cluster, metadata: {name: theirs, namespace: fleet, annotations: {`+
				api.BlockMoveAnnotation+`: another-controller}}, spec: {paused: true}}`),
		},
		want: []string{"fleet/theirs"},
	}, {
		name: "no clusters",
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			got := plan.PausedClusters(tc.clusters)
			if tc.want == nil {
				g.Expect(got).To(BeEmpty())
				return
			}
			g.Expect(got).To(Equal(tc.want))
		})
	}
}

func TestUnavailableClusters(t *testing.T) {
	cluster := func(ns, name, extra string) *unstructured.Unstructured {
		return fromYAML(t, `{apiVersion: cluster.x-k8s.io/v1beta2, kind: Cluster, metadata: {name: `+name+`, namespace: `+ns+extra+`}}`)
	}
	deleting := `, deletionTimestamp: "2026-12-01T00:00:00Z", finalizers: [cluster.cluster.x-k8s.io]`
	cases := []struct {
		name               string                       // what the case proves
		rendered, live     []*unstructured.Unstructured // the manifest's Clusters, and those found live
		missing, deletions []string                     // want, "<ns>/<name>"
	}{{
		name:     "every rendered Cluster live",
		rendered: []*unstructured.Unstructured{cluster("fleet", "a", "")},
		live:     []*unstructured.Unstructured{cluster("fleet", "a", "")},
	}, {
		name:     "one not live (moved away, or deleted)",
		rendered: []*unstructured.Unstructured{cluster("fleet", "a", ""), cluster("fleet", "b", "")},
		live:     []*unstructured.Unstructured{cluster("fleet", "a", "")},
		missing:  []string{"fleet/b"},
	}, {
		name:     "a Cluster of the same name in another namespace does not count",
		rendered: []*unstructured.Unstructured{cluster("fleet", "a", "")},
		live:     []*unstructured.Unstructured{cluster("other", "a", "")},
		missing:  []string{"fleet/a"},
	}, {
		name:      "one being deleted",
		rendered:  []*unstructured.Unstructured{cluster("fleet", "a", "")},
		live:      []*unstructured.Unstructured{cluster("fleet", "a", deleting)},
		deletions: []string{"fleet/a"},
	}, {
		name: "a release that renders no Cluster",
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			missing, deletions := plan.UnavailableClusters(tc.rendered, tc.live)
			g.Expect(missing).To(Equal(tc.missing))
			g.Expect(deletions).To(Equal(tc.deletions))
		})
	}
}

func TestPausedObjects(t *testing.T) {
	obj := func(kind, name, extra string) *unstructured.Unstructured {
		return fromYAML(t, `{apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: `+kind+`, metadata: {name: `+name+`, namespace: fleet`+extra+`}}`)
	}
	paused := `, annotations: {` + api.ClusterPausedAnnotation + `: ""}`
	g := NewWithT(t)
	g.Expect(plan.PausedObjects(nil)).To(BeEmpty())
	g.Expect(plan.PausedObjects([]*unstructured.Unstructured{
		obj("Metal3MachineTemplate", "x", paused),
		nil, // missing live
		obj("Metal3MachineTemplate", "y", `, annotations: {other: "true"}`),
		obj("MachineDeployment", "md", `, annotations: {`+api.ClusterPausedAnnotation+`: "false"}`),
		// On objects other than Clusters, only the annotation counts.
		fromYAML(t, `{apiVersion: cluster.x-k8s.io/v1beta2, kind: MachineDeployment, metadata: {name: p, namespace: fleet}, spec: {paused: true}}`),
	})).To(Equal([]string{"Metal3MachineTemplate fleet/x", "MachineDeployment fleet/md"}), "the annotation, whatever its value")
}
