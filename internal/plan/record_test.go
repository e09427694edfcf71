package plan_test

import (
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/diff"
	"github.com/templatedrift/template-drift-controller/internal/plan"
)

// liveWithAnnotations is the drifted live template m3mtLive with the
// metadata.annotations given as a YAML flow value; "" leaves the field out.
func liveWithAnnotations(t *testing.T, annotations string) *unstructured.Unstructured {
	t.Helper()
	live := fromYAML(t, m3mtLive)
	if annotations != "" {
		ann := fromYAML(t, "{a: "+annotations+"}").Object["a"]
		g := NewWithT(t)
		g.Expect(unstructured.SetNestedField(live.Object, ann, "metadata", "annotations")).To(Succeed())
	}
	return live
}

// Pointers of the record annotations (a "/" in a key is escaped as "~1").
const (
	correctionPath = "/metadata/annotations/templatedrift.io~1correction"
	sourcePath     = "/metadata/annotations/templatedrift.io~1source-release"
	supersededPath = "/metadata/annotations/templatedrift.io~1superseded-by"
	digestPath     = "/metadata/annotations/templatedrift.io~1corrected-drift"
)

func TestPatchChanges(t *testing.T) {
	const release = "fleet/cluster-a.v3"
	drift := diff.Change{Path: "/spec/template/spec/image/url", Op: diff.OpReplace, Before: "http://10.0.0.1/img", After: "http://10.0.0.2/img"}
	record := map[string]string{api.SourceReleaseAnnotation: release, api.CorrectionAnnotation: "in-place"}
	helm := map[string]string{api.HelmReleaseNameAnnotation: "cluster-a", api.HelmReleaseNamespaceAnnotation: "fleet"}

	cases := []struct {
		name string // what the case proves
		// annotations is the live template's metadata.annotations as YAML; "" for none.
		annotations string
		// digest is the plan's DriftDigest; "" for none.
		digest string
		// want is the whole list of changes.
		want []diff.Change
		// wantAnnotations are the live annotations after the patch.
		wantAnnotations map[string]string
	}{{
		name: "no annotations: the whole map is added at /metadata/annotations, after the drift",
		want: []diff.Change{drift, {Path: "/metadata/annotations", Op: diff.OpAdd, After: map[string]any{
			api.SourceReleaseAnnotation: release, api.CorrectionAnnotation: "in-place",
		}}},
		wantAnnotations: record,
	}, {
		name:        "null annotations: the whole map too",
		annotations: "null",
		want: []diff.Change{drift, {Path: "/metadata/annotations", Op: diff.OpAdd, After: map[string]any{
			api.SourceReleaseAnnotation: release, api.CorrectionAnnotation: "in-place",
		}}},
		wantAnnotations: record,
	}, {
		name:            "existing annotations: one add per key, in key order; Helm's are kept",
		annotations:     "{meta.helm.sh/release-name: cluster-a, meta.helm.sh/release-namespace: fleet}",
		want:            []diff.Change{drift, {Path: correctionPath, Op: diff.OpAdd, After: "in-place"}, {Path: sourcePath, Op: diff.OpAdd, After: release}},
		wantAnnotations: merge(helm, record),
	}, {
		name:            "an empty map is a parent that exists",
		annotations:     "{}",
		want:            []diff.Change{drift, {Path: correctionPath, Op: diff.OpAdd, After: "in-place"}, {Path: sourcePath, Op: diff.OpAdd, After: release}},
		wantAnnotations: record,
	}, {
		name:            "the record of an earlier release's recreate is overwritten",
		annotations:     "{templatedrift.io/source-release: fleet/cluster-a.v2, templatedrift.io/correction: recreate}",
		want:            []diff.Change{drift, {Path: correctionPath, Op: diff.OpAdd, After: "in-place"}, {Path: sourcePath, Op: diff.OpAdd, After: release}},
		wantAnnotations: record,
	}, {
		name:        "a superseded-by mark of an earlier rotation is removed: the template is in use again",
		annotations: "{templatedrift.io/superseded-by: workers-5f1c2a9b0d}",
		want: []diff.Change{drift, {Path: correctionPath, Op: diff.OpAdd, After: "in-place"}, {Path: sourcePath, Op: diff.OpAdd, After: release},
			{Path: supersededPath, Op: diff.OpRemove}},
		wantAnnotations: record,
	}, {
		name:        "the plan's drift digest is recorded with the correction, replacing an earlier one",
		annotations: "{templatedrift.io/corrected-drift: 0000aaaa0000}",
		digest:      "5e1f00c0ffee",
		want: []diff.Change{drift, {Path: digestPath, Op: diff.OpAdd, After: "5e1f00c0ffee"},
			{Path: correctionPath, Op: diff.OpAdd, After: "in-place"}, {Path: sourcePath, Op: diff.OpAdd, After: release}},
		wantAnnotations: merge(record, map[string]string{api.CorrectedDriftAnnotation: "5e1f00c0ffee"}),
	}, {
		name:   "no annotations, with a digest: in the whole map",
		digest: "5e1f00c0ffee",
		want: []diff.Change{drift, {Path: "/metadata/annotations", Op: diff.OpAdd, After: map[string]any{
			api.SourceReleaseAnnotation: release, api.CorrectionAnnotation: "in-place", api.CorrectedDriftAnnotation: "5e1f00c0ffee",
		}}},
		wantAnnotations: merge(record, map[string]string{api.CorrectedDriftAnnotation: "5e1f00c0ffee"}),
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			live := liveWithAnnotations(t, tc.annotations)
			before := live.DeepCopy()
			p := plan.TemplatePlan{Outcome: plan.OutcomeDrifted, Strategy: plan.StrategyInPlace, Changes: []diff.Change{drift}, Live: live, DriftDigest: tc.digest}

			got := plan.PatchChanges(p, release)
			g.Expect(got).To(Equal(tc.want))
			g.Expect(p.Changes).To(Equal([]diff.Change{drift}), "the plan's changes are not extended")
			g.Expect(live).To(Equal(before), "the live object is not mutated")

			// The patch applies to the live object as the API server would,
			// and the next pass reads the record from it.
			patched, err := diff.Apply(live, got)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(patched.GetAnnotations()).To(Equal(tc.wantAnnotations))
			url, _, _ := unstructured.NestedString(patched.Object, "spec", "template", "spec", "image", "url")
			g.Expect(url).To(Equal("http://10.0.0.2/img"))
			g.Expect(plan.DecideTemplate(plan.TemplateInput{Desired: fromYAML(t, m3mtDesired), Live: patched, Release: release}).Outcome).
				To(Equal(plan.OutcomeCorrected))
		})
	}
}

func TestMarkChanges(t *testing.T) {
	const to = "workers-5f1c2a9b0d"
	cases := []struct {
		name string // what the case proves
		// annotations is the live original's metadata.annotations as YAML; "" for none.
		annotations string
		// want is the whole list of changes.
		want []diff.Change
		// wantAnnotations are the live annotations after the patch.
		wantAnnotations map[string]string
	}{{
		name:            "no annotations: the whole map",
		want:            []diff.Change{{Path: "/metadata/annotations", Op: diff.OpAdd, After: map[string]any{api.SupersededByAnnotation: to}}},
		wantAnnotations: map[string]string{api.SupersededByAnnotation: to},
	}, {
		name:            "existing annotations: the one key, the others kept",
		annotations:     "{meta.helm.sh/release-name: cluster-a}",
		want:            []diff.Change{{Path: supersededPath, Op: diff.OpAdd, After: to}},
		wantAnnotations: map[string]string{api.HelmReleaseNameAnnotation: "cluster-a", api.SupersededByAnnotation: to},
	}, {
		name:            "marked for an older replacement: overwritten",
		annotations:     "{templatedrift.io/superseded-by: workers-0000000000}",
		want:            []diff.Change{{Path: supersededPath, Op: diff.OpAdd, After: to}},
		wantAnnotations: map[string]string{api.SupersededByAnnotation: to},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			live := liveWithAnnotations(t, tc.annotations)
			p := plan.TemplatePlan{Outcome: plan.OutcomeDrifted, Strategy: plan.StrategyRotate, Rotation: &plan.Rotation{To: to}, Live: live}

			got := plan.MarkChanges(p)
			g.Expect(got).To(Equal(tc.want))
			patched, err := diff.Apply(live, got)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(patched.GetAnnotations()).To(Equal(tc.wantAnnotations))
			g.Expect(plan.IsMarked(patched, to)).To(BeTrue())
			g.Expect(patched.Object["spec"]).To(Equal(live.Object["spec"]), "marking changes no spec field")
		})
	}
}

// merge returns the union of maps, later ones winning.
func merge(maps ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range maps {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}
