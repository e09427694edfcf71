package plan_test

import (
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/plan"
)

// pruneRelease is the release every prune case works for.
var pruneRelease = plan.Release{Name: "cluster", Namespace: "fleet", Ref: "fleet/cluster.v3"}

// liveTemplate builds a live Metal3MachineTemplate (or, with kind, another
// template kind) of namespace fleet called name, with annotations.
func liveTemplate(t *testing.T, kind, name string, annotations map[string]string) *unstructured.Unstructured {
	t.Helper()
	o := fromYAML(t, `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: `+kind+`
metadata: {name: `+name+`, namespace: fleet}
`)
	o.SetAnnotations(annotations)
	return o
}

// replacementOf is the annotations the add-on leaves on a replacement of
// original made for release ref.
func replacementOf(original, ref string) map[string]string {
	return map[string]string{api.ReplacesAnnotation: original, api.SourceReleaseAnnotation: ref}
}

func TestReplacements(t *testing.T) {
	g := NewWithT(t)
	live := []*unstructured.Unstructured{
		liveTemplate(t, "Metal3MachineTemplate", "workers", nil),
		liveTemplate(t, "Metal3MachineTemplate", "workers-0a1b2c3d4e", replacementOf("workers", "fleet/cluster.v1")),
		liveTemplate(t, "Metal3MachineTemplate", "workers-5f1c2a9b0d", map[string]string{api.ReplacesAnnotation: "workers"}),
		liveTemplate(t, "Metal3DataTemplate", "workers-data-1111111111", replacementOf("workers-data", "fleet/other.v2")),
		// A recreated original carries a record, but replaces nothing.
		liveTemplate(t, "Metal3MachineTemplate", "cp", map[string]string{api.SourceReleaseAnnotation: "fleet/cluster.v3"}),
		liveTemplate(t, "Metal3MachineTemplate", "empty", map[string]string{api.ReplacesAnnotation: ""}),
	}
	m3mt := func(name string) manifest.ID { return id(manifest.Metal3MachineTemplateKind, "fleet", name) }
	g.Expect(plan.Replacements(live)).To(Equal(map[manifest.ID]manifest.ID{
		m3mt("workers-0a1b2c3d4e"): m3mt("workers"),
		// The annotation alone makes a replacement: whose release it is
		// matters for the clean-up, not for following a chain.
		m3mt("workers-5f1c2a9b0d"): m3mt("workers"),
		id(manifest.Metal3DataTemplateKind, "fleet", "workers-data-1111111111"): id(manifest.Metal3DataTemplateKind, "fleet", "workers-data"),
	}))
	g.Expect(plan.Replacements(nil)).To(BeEmpty())
}

func TestDecidePrune(t *testing.T) {
	const name = "workers-0a1b2c3d4e"
	cases := []struct {
		name string // what the case proves
		// annotations are the candidate's.
		annotations map[string]string
		// kind is the candidate's kind; Metal3MachineTemplate when empty.
		kind string
		// mutate adjusts the candidate (finalizers, deletion).
		mutate func(o *unstructured.Unstructured)
		// users are the users of the candidate; current the replacements a
		// rotation of this pass uses.
		users   []plan.User
		current bool
		want    bool // picked for deletion
	}{{
		name:        "an unused replacement of an earlier version of the release: picked",
		annotations: replacementOf("workers", "fleet/cluster.v1"),
		want:        true,
	}, {
		name:        "an unused replacement made for the version in effect: picked",
		annotations: replacementOf("workers", "fleet/cluster.v3"),
		want:        true,
	}, {
		name:        "an original, even one the add-on recreated for this release: never",
		annotations: map[string]string{api.SourceReleaseAnnotation: "fleet/cluster.v3", api.CorrectionAnnotation: "recreate"},
	}, {
		name:        "a replacement without a source release: not provably ours",
		annotations: map[string]string{api.ReplacesAnnotation: "workers"},
	}, {
		name:        "a replacement of another release of the namespace",
		annotations: replacementOf("workers", "fleet/other.v1"),
	}, {
		name:        "a replacement of a release whose name only starts like this one's",
		annotations: replacementOf("workers", "fleet/cluster-2.v1"),
	}, {
		name:        "a replacement of the same release name in another namespace",
		annotations: replacementOf("workers", "tenant-b/cluster.v1"),
	}, {
		name:        "the replacement a rotation of this pass uses",
		annotations: replacementOf("workers", "fleet/cluster.v3"),
		current:     true,
	}, {
		name:        "a replacement a consumer of the release still references",
		annotations: replacementOf("workers", "fleet/cluster.v2"),
		users:       []plan.User{{ID: id(manifest.MachineDeploymentKind, "fleet", "md-0"), Own: true}},
	}, {
		name:        "a replacement a MachineSet still holds",
		annotations: replacementOf("workers", "fleet/cluster.v2"),
		users:       []plan.User{{ID: id(manifest.MachineSetKind, "fleet", "md-0-abcde")}},
	}, {
		name:        "a replacement already being deleted",
		annotations: replacementOf("workers", "fleet/cluster.v2"),
		mutate: func(o *unstructured.Unstructured) {
			now := metav1.Now()
			o.SetDeletionTimestamp(&now)
		},
	}, {
		name:        "a replacement with a finalizer whose release cannot be predicted",
		annotations: replacementOf("workers", "fleet/cluster.v2"),
		mutate:      func(o *unstructured.Unstructured) { o.SetFinalizers([]string{"example.com/protect"}) },
	}, {
		name:        "a data template replacement with CAPM3's finalizer and no claim: picked",
		kind:        "Metal3DataTemplate",
		annotations: replacementOf("workers-data", "fleet/cluster.v2"),
		mutate:      func(o *unstructured.Unstructured) { o.SetFinalizers([]string{plan.Metal3DataTemplateFinalizer}) },
		want:        true,
	}, {
		name:        "a data template replacement with CAPM3's finalizer and a claim",
		kind:        "Metal3DataTemplate",
		annotations: replacementOf("workers-data", "fleet/cluster.v2"),
		mutate:      func(o *unstructured.Unstructured) { o.SetFinalizers([]string{plan.Metal3DataTemplateFinalizer}) },
		users:       []plan.User{{ID: id(manifest.Metal3DataClaimKind, "fleet", "workers-abc12")}},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			kind := tc.kind
			if kind == "" {
				kind = "Metal3MachineTemplate"
			}
			o := liveTemplate(t, kind, name, tc.annotations)
			if tc.mutate != nil {
				tc.mutate(o)
			}
			oid := manifest.IDOf(o)
			users := plan.Users{}
			if tc.users != nil {
				users[oid] = tc.users
			}
			// Users and rotations of another object never protect this one.
			other := id(manifest.Metal3MachineTemplateKind, "fleet", "workers-5f1c2a9b0d")
			users[other] = []plan.User{{ID: id(manifest.MachineDeploymentKind, "fleet", "md-1"), Own: true}}
			current := map[manifest.ID]bool{other: true}
			if tc.current {
				current[oid] = true
			}
			got := plan.DecidePrune([]*unstructured.Unstructured{o}, users, current, pruneRelease)
			if tc.want {
				g.Expect(got).To(HaveLen(1))
				g.Expect(got[0]).To(BeIdenticalTo(o))
				return
			}
			g.Expect(got).To(BeEmpty())
		})
	}
}

// TestDecidePruneSortsAndFilters: among many live objects, only the unused
// replacements of the release are picked, sorted by ID whatever the list
// order.
func TestDecidePruneSortsAndFilters(t *testing.T) {
	g := NewWithT(t)
	oldWorkers := liveTemplate(t, "Metal3MachineTemplate", "workers-0a1b2c3d4e", replacementOf("workers", "fleet/cluster.v1"))
	oldCP := liveTemplate(t, "Metal3MachineTemplate", "cp-9999999999", replacementOf("cp", "fleet/cluster.v2"))
	oldData := liveTemplate(t, "Metal3DataTemplate", "workers-data-1111111111", replacementOf("workers-data", "fleet/cluster.v2"))
	inUse := liveTemplate(t, "Metal3MachineTemplate", "workers-2222222222", replacementOf("workers", "fleet/cluster.v2"))
	current := liveTemplate(t, "Metal3MachineTemplate", "workers-5f1c2a9b0d", replacementOf("workers", "fleet/cluster.v3"))
	original := liveTemplate(t, "Metal3MachineTemplate", "workers", nil)
	stranger := liveTemplate(t, "Metal3MachineTemplate", "other-3333333333", replacementOf("other", "fleet/other.v1"))

	live := []*unstructured.Unstructured{oldWorkers, stranger, inUse, oldData, original, current, oldCP}
	users := plan.Users{
		manifest.IDOf(inUse):    {{ID: id(manifest.MachineSetKind, "fleet", "md-0-abcde")}},
		manifest.IDOf(original): {{ID: id(manifest.MachineDeploymentKind, "fleet", "md-1")}},
	}
	got := plan.DecidePrune(live, users, map[manifest.ID]bool{manifest.IDOf(current): true}, pruneRelease)
	g.Expect(got).To(HaveLen(3))
	g.Expect(got[0]).To(BeIdenticalTo(oldData), "Metal3DataTemplate/... sorts before Metal3MachineTemplate/...")
	g.Expect(got[1]).To(BeIdenticalTo(oldCP))
	g.Expect(got[2]).To(BeIdenticalTo(oldWorkers))

	g.Expect(plan.DecidePrune(nil, plan.Users{}, nil, pruneRelease)).To(BeEmpty())
}

func TestOfRelease(t *testing.T) {
	rel := plan.Release{Name: "name", Namespace: "ns", Ref: "ns/name.v7"}
	cases := []struct {
		ref  string // api.SourceReleaseAnnotation
		want bool   // names a version of rel
	}{
		{"ns/name.v3", true},
		{"ns/name.v7", true},
		{"ns/name.v12", true},
		{"ns/name.v", false},
		{"ns/name.v3x", false},
		{"ns/name.v-3", false},
		{"ns/name.v3.v4", false},
		{"ns/name-2.v3", false},
		{"ns/nam.v3", false},
		{"ns/name", false},
		{"other/name.v3", false},
		{"ns2/name.v3", false},
		{"xns/name.v3", false},
		{"name.v3", false},
		{"", false},
	}
	for _, tc := range cases {
		t.Run("ref="+tc.ref, func(t *testing.T) {
			NewWithT(t).Expect(plan.OfRelease(tc.ref, rel)).To(Equal(tc.want))
		})
	}
}
