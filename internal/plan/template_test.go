package plan_test

import (
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/diff"
	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/plan"
)

const m3mtDesired = `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: Metal3MachineTemplate
metadata:
  name: workers
  namespace: fleet
spec:
  template:
    spec:
      dataTemplate:
        name: workers-data
      image:
        url: http://10.0.0.2/img
`

const m3mtLive = `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: Metal3MachineTemplate
metadata:
  name: workers
  namespace: fleet
  resourceVersion: "12"
spec:
  template:
    spec:
      dataTemplate:
        name: workers-data
      image:
        url: http://10.0.0.1/img
`

func TestDecideTemplate(t *testing.T) {
	drift := []diff.Change{{Path: "/spec/template/spec/image/url", Op: diff.OpReplace, Before: "http://10.0.0.1/img", After: "http://10.0.0.2/img"}}
	digest := plan.DriftDigest(drift)
	replacementDrift := []diff.Change{{Path: "/spec/template/spec/image/url", Op: diff.OpReplace, Before: "http://10.0.0.9/img", After: "http://10.0.0.2/img"}}
	const replacementName = "workers-5f1c2a9b0d"
	const release = "fleet/cluster.v2"
	csa := plan.HelmFacts{ApplyMethod: "csa"}
	ssa := plan.HelmFacts{ApplyMethod: "ssa"}

	cases := []struct {
		name string // what the case proves
		// live is the live template as YAML; "" means missing.
		live string
		// mutate adjusts the input after the defaults below are filled in
		// (Desired, Live, Changes=drift, ReplacementName, Requested=auto, Helm=csa).
		mutate func(in *plan.TemplateInput)
		// want is the expected plan; ID and Changes are checked separately.
		want plan.TemplatePlan
	}{{
		name: "skip wins over everything, even a missing live object",
		mutate: func(in *plan.TemplateInput) {
			in.Skip = "owned by a ClusterClass"
		},
		want: plan.TemplatePlan{Outcome: plan.OutcomeSkipped, Message: "owned by a ClusterClass"},
	}, {
		name: "skip on a drifted live object",
		live: m3mtLive,
		mutate: func(in *plan.TemplateInput) {
			in.Skip = "opted out"
			in.DryRun = plan.DryRunAccepted
		},
		want: plan.TemplatePlan{Outcome: plan.OutcomeSkipped, Message: "opted out"},
	}, {
		name: "missing is recreated, whatever the requested strategy",
		mutate: func(in *plan.TemplateInput) {
			in.Requested = plan.StrategyInPlace
		},
		want: plan.TemplatePlan{Outcome: plan.OutcomeMissing, Strategy: plan.StrategyRecreate, Writes: []plan.Write{plan.WriteCreate}},
	}, {
		name: "being deleted: wait, even when drifted",
		live: m3mtLive,
		mutate: func(in *plan.TemplateInput) {
			now := metav1.Now()
			in.Live.SetDeletionTimestamp(&now)
			in.DryRun = plan.DryRunAccepted
		},
		want: plan.TemplatePlan{Outcome: plan.OutcomeWaiting},
	}, {
		name: "no changes: in sync",
		live: m3mtLive,
		mutate: func(in *plan.TemplateInput) {
			in.Changes = nil
			in.DryRun = plan.DryRunAccepted
		},
		want: plan.TemplatePlan{Outcome: plan.OutcomeInSync},
	}, {
		name: "drifted, dry-run accepted: in place",
		live: m3mtLive,
		mutate: func(in *plan.TemplateInput) {
			in.DryRun = plan.DryRunAccepted
		},
		want: plan.TemplatePlan{Outcome: plan.OutcomeDrifted, Strategy: plan.StrategyInPlace, Writes: []plan.Write{plan.WritePatch}, DriftDigest: digest},
	}, {
		name: "drifted, locked, csa: rotate, create the replacement and mark the original",
		live: m3mtLive,
		mutate: func(in *plan.TemplateInput) {
			in.DryRun, in.DryRunMessage = plan.DryRunLocked, "spec.template: field is immutable"
		},
		want: plan.TemplatePlan{Outcome: plan.OutcomeDrifted, Strategy: plan.StrategyRotate,
			Rotation: &plan.Rotation{To: replacementName}, Writes: []plan.Write{plan.WriteCreateReplacement, plan.WriteMarkSuperseded}},
	}, {
		name: "rotate with a matching replacement already there: no create",
		live: m3mtLive,
		mutate: func(in *plan.TemplateInput) {
			in.DryRun = plan.DryRunLocked
			in.Replacement = in.Desired.DeepCopy()
			in.Replacement.SetName(replacementName)
		},
		want: plan.TemplatePlan{Outcome: plan.OutcomeDrifted, Strategy: plan.StrategyRotate,
			Rotation: &plan.Rotation{To: replacementName}, Writes: []plan.Write{plan.WriteMarkSuperseded}},
	}, {
		name: "rotate with the original already marked for this replacement: no mark",
		live: m3mtLive,
		mutate: func(in *plan.TemplateInput) {
			in.DryRun = plan.DryRunLocked
			in.Live.SetAnnotations(map[string]string{api.SupersededByAnnotation: replacementName})
		},
		want: plan.TemplatePlan{Outcome: plan.OutcomeDrifted, Strategy: plan.StrategyRotate,
			Rotation: &plan.Rotation{To: replacementName}, Writes: []plan.Write{plan.WriteCreateReplacement}},
	}, {
		name: "rotate, steady state: replacement there and original marked: nothing to write, superseded",
		live: m3mtLive,
		mutate: func(in *plan.TemplateInput) {
			in.Requested, in.DryRun = plan.StrategyRotate, plan.DryRunNotRun
			in.Replacement = in.Desired.DeepCopy()
			in.Live.SetAnnotations(map[string]string{api.SupersededByAnnotation: replacementName})
		},
		want: plan.TemplatePlan{Outcome: plan.OutcomeSuperseded, Strategy: plan.StrategyRotate, Rotation: &plan.Rotation{To: replacementName}},
	}, {
		name: "rotate with the original marked for an older replacement: mark again",
		live: m3mtLive,
		mutate: func(in *plan.TemplateInput) {
			in.Requested = plan.StrategyRotate
			in.Live.SetAnnotations(map[string]string{api.SupersededByAnnotation: "workers-0000000000"})
		},
		want: plan.TemplatePlan{Outcome: plan.OutcomeDrifted, Strategy: plan.StrategyRotate,
			Rotation: &plan.Rotation{To: replacementName}, Writes: []plan.Write{plan.WriteCreateReplacement, plan.WriteMarkSuperseded}},
	}, {
		name: "rotate with a replacement that differs from the manifest: failed, names the replacement",
		live: m3mtLive,
		mutate: func(in *plan.TemplateInput) {
			in.DryRun = plan.DryRunLocked
			in.Replacement = in.Desired.DeepCopy()
			in.ReplacementChanges = replacementDrift
		},
		want: plan.TemplatePlan{Outcome: plan.OutcomeFailed, Strategy: plan.StrategyRotate,
			Message: "replacement " + replacementName + ` exists and differs from the manifest: /spec/template/spec/image/url: "http://10.0.0.9/img" → "http://10.0.0.2/img"`},
	}, {
		name: "locked with ssa: recreate, no rotation fields",
		live: m3mtLive,
		mutate: func(in *plan.TemplateInput) {
			in.DryRun, in.Helm = plan.DryRunLocked, ssa
		},
		want: plan.TemplatePlan{Outcome: plan.OutcomeDrifted, Strategy: plan.StrategyRecreate, Writes: []plan.Write{plan.WriteDelete, plan.WriteCreate}, DriftDigest: digest},
	}, {
		name: "recreate ignores a differing replacement",
		live: m3mtLive,
		mutate: func(in *plan.TemplateInput) {
			in.Requested = plan.StrategyRecreate
			in.Replacement = in.Desired.DeepCopy()
			in.ReplacementChanges = replacementDrift
		},
		want: plan.TemplatePlan{Outcome: plan.OutcomeDrifted, Strategy: plan.StrategyRecreate, Writes: []plan.Write{plan.WriteDelete, plan.WriteCreate}, DriftDigest: digest},
	}, {
		name: "in-place requested, server refuses: failed with the server's message",
		live: m3mtLive,
		mutate: func(in *plan.TemplateInput) {
			in.Requested = plan.StrategyInPlace
			in.DryRun, in.DryRunMessage = plan.DryRunLocked, "spec.template: Invalid value: field is immutable"
		},
		want: plan.TemplatePlan{Outcome: plan.OutcomeFailed, Message: "in-place correction refused: spec.template: Invalid value: field is immutable"},
	}, {
		name: "auto, dry-run denied (a webhook or the identity's rights): failed with the server's message",
		live: m3mtLive,
		mutate: func(in *plan.TemplateInput) {
			in.DryRun, in.DryRunMessage = plan.DryRunFailed, `admission webhook "validation.metal3.io" denied the request`
		},
		want: plan.TemplatePlan{Outcome: plan.OutcomeFailed, Message: `in-place correction refused: admission webhook "validation.metal3.io" denied the request`},
	}, {
		name: "in sync, with the record of an in-place correction for this release: corrected",
		live: m3mtLive,
		mutate: func(in *plan.TemplateInput) {
			in.Changes = nil
			in.Live.SetAnnotations(map[string]string{api.SourceReleaseAnnotation: release, api.CorrectionAnnotation: "in-place"})
		},
		want: plan.TemplatePlan{Outcome: plan.OutcomeCorrected, Strategy: plan.StrategyInPlace},
	}, {
		name: "in sync, with the record of a recreate for this release: corrected",
		live: m3mtLive,
		mutate: func(in *plan.TemplateInput) {
			in.Changes = nil
			in.Live.SetAnnotations(map[string]string{api.SourceReleaseAnnotation: release, api.CorrectionAnnotation: "recreate"})
		},
		want: plan.TemplatePlan{Outcome: plan.OutcomeCorrected, Strategy: plan.StrategyRecreate},
	}, {
		name: "in sync, with the record of a correction for an earlier release: just in sync",
		live: m3mtLive,
		mutate: func(in *plan.TemplateInput) {
			in.Changes = nil
			in.Live.SetAnnotations(map[string]string{api.SourceReleaseAnnotation: "fleet/cluster.v1", api.CorrectionAnnotation: "in-place"})
		},
		want: plan.TemplatePlan{Outcome: plan.OutcomeInSync},
	}, {
		name: "in sync, a record with an unknown strategy is no record",
		live: m3mtLive,
		mutate: func(in *plan.TemplateInput) {
			in.Changes = nil
			in.Live.SetAnnotations(map[string]string{api.SourceReleaseAnnotation: release, api.CorrectionAnnotation: "sideways"})
		},
		want: plan.TemplatePlan{Outcome: plan.OutcomeInSync},
	}, {
		name: "rotate, steady state, replacement built from this release: corrected by rotation",
		live: m3mtLive,
		mutate: func(in *plan.TemplateInput) {
			in.Requested, in.DryRun = plan.StrategyRotate, plan.DryRunNotRun
			in.Replacement = in.Desired.DeepCopy()
			in.Replacement.SetAnnotations(map[string]string{api.SourceReleaseAnnotation: release})
			in.Live.SetAnnotations(map[string]string{api.SupersededByAnnotation: replacementName})
		},
		want: plan.TemplatePlan{Outcome: plan.OutcomeCorrected, Strategy: plan.StrategyRotate, Rotation: &plan.Rotation{To: replacementName}},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			in := plan.TemplateInput{
				Desired:         fromYAML(t, m3mtDesired),
				Changes:         drift,
				ReplacementName: replacementName,
				Requested:       plan.StrategyAuto,
				Helm:            csa,
				Release:         release,
			}
			if tc.live != "" {
				in.Live = fromYAML(t, tc.live)
			}
			if tc.mutate != nil {
				tc.mutate(&in)
			}
			got := plan.DecideTemplate(in)
			g.Expect(got.ID).To(Equal(id(manifest.Metal3MachineTemplateKind, "fleet", "workers")))
			g.Expect(got.Changes).To(Equal(in.Changes))
			g.Expect(got.Desired).To(BeIdenticalTo(in.Desired))
			g.Expect(got.Live).To(BeIdenticalTo(in.Live))
			got.ID, got.Changes, got.Desired, got.Live = manifest.ID{}, nil, nil, nil
			g.Expect(got).To(Equal(tc.want))
		})
	}
}

func TestEffectiveDesired(t *testing.T) {
	dataID := id(manifest.Metal3DataTemplateKind, "fleet", "workers-data")
	cases := []struct {
		name string // what the case proves
		// desired is the manifest's template as YAML.
		desired string
		// renames are the rotations in effect.
		renames map[manifest.ID]string
		// wantDataTemplate is the expected .spec.template.spec.dataTemplate.name.
		wantDataTemplate string
		// wantSame is true when the input itself must be returned.
		wantSame bool
		// wantErr is an error the result must wrap; nil for none.
		wantErr error
	}{{
		name:             "data template renamed: reference rewritten",
		desired:          m3mtDesired,
		renames:          map[manifest.ID]string{dataID: "workers-data-0a1b2c3d4e"},
		wantDataTemplate: "workers-data-0a1b2c3d4e",
	}, {
		name:    "several renames, one applies",
		desired: m3mtDesired,
		renames: map[manifest.ID]string{
			id(manifest.Metal3DataTemplateKind, "fleet", "other-data"): "other-data-1111111111",
			dataID: "workers-data-0a1b2c3d4e",
			id(manifest.Metal3MachineTemplateKind, "fleet", "workers"):      "workers-2222222222",
			id(manifest.Metal3MachineTemplateKind, "fleet", "workers-data"): "wrong-kind-3333333333",
		},
		wantDataTemplate: "workers-data-0a1b2c3d4e",
	}, {
		name:             "no renames: untouched",
		desired:          m3mtDesired,
		wantDataTemplate: "workers-data",
		wantSame:         true,
	}, {
		name:             "rename of a data template of another namespace: untouched",
		desired:          m3mtDesired,
		renames:          map[manifest.ID]string{id(manifest.Metal3DataTemplateKind, "other", "workers-data"): "x-1"},
		wantDataTemplate: "workers-data",
		wantSame:         true,
	}, {
		name:             "rename of another kind with the same name: untouched",
		desired:          m3mtDesired,
		renames:          map[manifest.ID]string{id(manifest.Metal3MachineTemplateKind, "fleet", "workers-data"): "x-1"},
		wantDataTemplate: "workers-data",
		wantSame:         true,
	}, {
		name:             "rename to the same name: untouched",
		desired:          m3mtDesired,
		renames:          map[manifest.ID]string{dataID: "workers-data"},
		wantDataTemplate: "workers-data",
		wantSame:         true,
	}, {
		name: "reference into another namespace: error",
		desired: `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: Metal3MachineTemplate
metadata: {name: workers, namespace: fleet}
spec:
  template:
    spec:
      dataTemplate: {name: workers-data, namespace: tenant-b}
`,
		renames: map[manifest.ID]string{dataID: "workers-data-0a1b2c3d4e"},
		wantErr: manifest.ErrCrossNamespaceRef,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			desired := fromYAML(t, tc.desired)
			before := desired.DeepCopy()
			got, err := plan.EffectiveDesired(desired, tc.renames)
			g.Expect(desired).To(Equal(before), "the manifest object must never be mutated")
			if tc.wantErr != nil {
				g.Expect(err).To(MatchError(tc.wantErr))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			name, found, err := unstructured.NestedString(got.Object, "spec", "template", "spec", "dataTemplate", "name")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(found).To(BeTrue())
			g.Expect(name).To(Equal(tc.wantDataTemplate))
			if tc.wantSame {
				g.Expect(got).To(BeIdenticalTo(desired))
				return
			}
			// Only the reference changed.
			g.Expect(got).NotTo(BeIdenticalTo(desired))
			restored := got.DeepCopy()
			g.Expect(unstructured.SetNestedField(restored.Object, "workers-data", "spec", "template", "spec", "dataTemplate", "name")).To(Succeed())
			g.Expect(restored.Object).To(Equal(before.Object))
		})
	}
}
