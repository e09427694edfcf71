package plan_test

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/diff"
	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/plan"
)

// The data template fixtures: CAPM3 puts its finalizer on every live one.
const (
	m3dtDesired = `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: Metal3DataTemplate
metadata: {name: workers-data, namespace: fleet}
spec:
  clusterName: cluster-a
  metaData:
    strings: [{key: role, value: worker}]
`
	m3dtLive = `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: Metal3DataTemplate
metadata:
  name: workers-data
  namespace: fleet
  resourceVersion: "7"
  finalizers: [metal3datatemplate.infrastructure.cluster.x-k8s.io]
spec:
  clusterName: cluster-a
  metaData:
    strings: [{key: role, value: edge}]
`
)

// TestDecideTemplateInUse covers what the users of a template change: a
// recreate that cannot complete is blocked, with what holds it and the ways
// out; a rotation that consumers outside the release still hold is held.
func TestDecideTemplateInUse(t *testing.T) {
	drift := []diff.Change{{Path: "/spec/template/spec/image/url", Op: diff.OpReplace, Before: "http://10.0.0.1/img", After: "http://10.0.0.2/img"}}
	digest := plan.DriftDigest(drift)
	const replacementName = "workers-5f1c2a9b0d"
	const release = "fleet/cluster.v2"
	csa := plan.HelmFacts{ApplyMethod: "csa"}
	ssa := plan.HelmFacts{ApplyMethod: "ssa"}
	ownMD := plan.User{ID: id(manifest.MachineDeploymentKind, "fleet", "md-0"), Own: true}
	foreignMD := id(manifest.MachineDeploymentKind, "fleet", "md-other")
	foreignKCP := id(manifest.KubeadmControlPlaneKind, "fleet", "cp-other")
	claim := func(name string) plan.User { return plan.User{ID: id(manifest.Metal3DataClaimKind, "fleet", name)} }
	recreate := []plan.Write{plan.WriteDelete, plan.WriteCreate}

	// The exact messages of the main blocked shapes.
	const (
		recreateCSA = "correction blocked: strategy recreate would delete the template, and the delete cannot complete: " +
			"it is in use by MachineDeployment md-0; nothing was deleted. Ways out: set " + api.StrategyAnnotation +
			" to auto, which corrects in place where the server accepts it and rotates otherwise, or give the template a new name in the chart"
		autoSSA = "correction blocked: the server refuses the change in place, a recreate cannot complete " +
			"(it is in use by MachineDeployment md-0), and a rotation would not stick: the release is applied with server-side apply, " +
			"so Helm sets every repointed reference back on each upgrade; nothing was written. Ways out: upgrade with client-side apply " +
			"(spec.upgrade.serverSideApply: disabled), after which auto rotates, or give the template a new name in the chart"
	)

	cases := []struct {
		name string // what the case proves
		// desired and live are the template as YAML; the Metal3MachineTemplate
		// fixtures when empty.
		desired, live string
		// mutate adjusts the input after the defaults (Desired, Live,
		// Changes=drift, ReplacementName, Requested=auto, Helm=csa, Release).
		mutate func(in *plan.TemplateInput)
		// want is the expected plan, when the message is exact; ID, Changes,
		// Desired and Live are checked separately.
		want plan.TemplatePlan
		// wantContains, when set, replaces the check of want.Message by
		// substrings, in order.
		wantContains []string
	}{{
		name: "recreate requested, the template in use: blocked, nothing written, the user named",
		mutate: func(in *plan.TemplateInput) {
			in.Requested, in.Users = plan.StrategyRecreate, []plan.User{ownMD}
		},
		want: plan.TemplatePlan{Outcome: plan.OutcomeBlocked, Strategy: plan.StrategyRecreate, Message: recreateCSA},
	}, {
		name: "recreate requested under ssa: the way out names client-side apply, then auto",
		mutate: func(in *plan.TemplateInput) {
			in.Requested, in.Helm, in.Users = plan.StrategyRecreate, ssa, []plan.User{ownMD}
		},
		want: plan.TemplatePlan{Outcome: plan.OutcomeBlocked, Strategy: plan.StrategyRecreate},
		wantContains: []string{"correction blocked: strategy recreate", "MachineDeployment md-0", "nothing was deleted",
			"Ways out: upgrade with client-side apply (spec.upgrade.serverSideApply: disabled) and set " + api.StrategyAnnotation + " to auto, after which it rotates",
			", or give the template a new name in the chart"},
	}, {
		name: "auto, locked, ssa, in use: blocked, with why a rotation would not stick",
		mutate: func(in *plan.TemplateInput) {
			in.DryRun, in.Helm, in.Users = plan.DryRunLocked, ssa, []plan.User{ownMD}
		},
		want: plan.TemplatePlan{Outcome: plan.OutcomeBlocked, Strategy: plan.StrategyRecreate, Message: autoSSA},
	}, {
		name: "auto, locked, ssa and drift detection: both reasons, both ways out",
		mutate: func(in *plan.TemplateInput) {
			in.DryRun, in.Users = plan.DryRunLocked, []plan.User{ownMD}
			in.Helm = plan.HelmFacts{ApplyMethod: "ssa", DriftDetectionEnabled: true}
		},
		want: plan.TemplatePlan{Outcome: plan.OutcomeBlocked, Strategy: plan.StrategyRecreate},
		wantContains: []string{"correction blocked", "(it is in use by MachineDeployment md-0)",
			"server-side apply, so Helm sets every repointed reference back on each upgrade and helm-controller drift detection is enabled",
			"Ways out: upgrade with client-side apply (spec.upgrade.serverSideApply: disabled) and set spec.driftDetection.mode to warn, after which auto rotates",
			", or give the template a new name in the chart"},
	}, {
		name: "auto, locked, csa with drift detection: recreate chosen, blocked, the way out is drift detection's",
		mutate: func(in *plan.TemplateInput) {
			in.DryRun, in.Users = plan.DryRunLocked, []plan.User{ownMD}
			in.Helm = plan.HelmFacts{ApplyMethod: "csa", DriftDetectionEnabled: true}
		},
		want: plan.TemplatePlan{Outcome: plan.OutcomeBlocked, Strategy: plan.StrategyRecreate},
		wantContains: []string{"correction blocked", "MachineDeployment md-0", "helm-controller drift detection is enabled",
			"Ways out: set spec.driftDetection.mode to warn, after which auto rotates, or give the template a new name in the chart"},
	}, {
		name: "auto, locked, ssa, no user but an unknown finalizer: blocked by the finalizer",
		mutate: func(in *plan.TemplateInput) {
			in.DryRun, in.Helm = plan.DryRunLocked, ssa
			in.Live.SetFinalizers([]string{"example.com/protect"})
		},
		want: plan.TemplatePlan{Outcome: plan.OutcomeBlocked, Strategy: plan.StrategyRecreate},
		wantContains: []string{"correction blocked", "(finalizer example.com/protect keeps it for as long as its controller decides)",
			"spec.upgrade.serverSideApply: disabled", "give the template a new name in the chart"},
	}, {
		name: "recreate requested, no user, no finalizer: the recreate is written as before",
		mutate: func(in *plan.TemplateInput) {
			in.Requested = plan.StrategyRecreate
		},
		want: plan.TemplatePlan{Outcome: plan.OutcomeDrifted, Strategy: plan.StrategyRecreate, Writes: recreate, DriftDigest: digest},
	}, {
		name: "auto, locked, ssa, no user, no finalizer: the recreate is written as before",
		mutate: func(in *plan.TemplateInput) {
			in.DryRun, in.Helm = plan.DryRunLocked, ssa
		},
		want: plan.TemplatePlan{Outcome: plan.OutcomeDrifted, Strategy: plan.StrategyRecreate, Writes: recreate, DriftDigest: digest},
	}, {
		name:    "a data template nothing names: CAPM3's finalizer is released at once, recreate written",
		desired: m3dtDesired,
		live:    m3dtLive,
		mutate: func(in *plan.TemplateInput) {
			in.DryRun, in.Helm = plan.DryRunLocked, ssa
		},
		want: plan.TemplatePlan{Outcome: plan.OutcomeDrifted, Strategy: plan.StrategyRecreate, Writes: recreate, DriftDigest: digest},
	}, {
		name:    "a data template with claims: blocked by the claims and CAPM3's finalizer",
		desired: m3dtDesired,
		live:    m3dtLive,
		mutate: func(in *plan.TemplateInput) {
			in.DryRun, in.Helm = plan.DryRunLocked, ssa
			in.Users = []plan.User{claim("workers-c"), claim("workers-a"), claim("workers-b")}
		},
		want: plan.TemplatePlan{Outcome: plan.OutcomeBlocked, Strategy: plan.StrategyRecreate},
		wantContains: []string{"correction blocked",
			"(it is in use by 3 Metal3DataClaims (workers-a, ...); finalizer " + plan.Metal3DataTemplateFinalizer +
				" keeps it until no Metal3DataClaim or Metal3Data names it)",
			"give the template a new name in the chart"},
	}, {
		name: "in place is never blocked by users: nothing is deleted",
		mutate: func(in *plan.TemplateInput) {
			in.DryRun, in.Users = plan.DryRunAccepted, []plan.User{ownMD}
			in.Live.SetFinalizers([]string{"example.com/protect"})
		},
		want: plan.TemplatePlan{Outcome: plan.OutcomeDrifted, Strategy: plan.StrategyInPlace, Writes: []plan.Write{plan.WritePatch}, DriftDigest: digest},
	}, {
		name: "a rotation is never blocked by users of the release: it deletes nothing",
		mutate: func(in *plan.TemplateInput) {
			in.DryRun, in.Users = plan.DryRunLocked, []plan.User{ownMD}
			in.Live.SetFinalizers([]string{"example.com/protect"})
		},
		want: plan.TemplatePlan{Outcome: plan.OutcomeDrifted, Strategy: plan.StrategyRotate, Rotation: &plan.Rotation{To: replacementName},
			Writes: []plan.Write{plan.WriteCreateReplacement, plan.WriteMarkSuperseded}},
	}, {
		name: "rotation held by foreign consumers: the replacement is created, the original never marked",
		mutate: func(in *plan.TemplateInput) {
			in.DryRun = plan.DryRunLocked
			in.Users = []plan.User{{ID: foreignKCP}, ownMD, {ID: foreignMD}}
			in.Holders = []manifest.ID{foreignKCP, foreignMD}
		},
		want: plan.TemplatePlan{Outcome: plan.OutcomeDrifted, Strategy: plan.StrategyRotate, Rotation: &plan.Rotation{To: replacementName, HeldBy: []manifest.ID{foreignKCP, foreignMD}},
			Writes: []plan.Write{plan.WriteCreateReplacement}},
	}, {
		name: "rotation held, the replacement there already: held, nothing to write",
		mutate: func(in *plan.TemplateInput) {
			in.DryRun = plan.DryRunLocked
			in.Replacement = in.Desired.DeepCopy()
			in.Replacement.SetName(replacementName)
			in.Holders = []manifest.ID{foreignMD}
		},
		want: plan.TemplatePlan{Outcome: plan.OutcomeHeld, Strategy: plan.StrategyRotate, Rotation: &plan.Rotation{To: replacementName, HeldBy: []manifest.ID{foreignMD}}},
	}, {
		name: "rotation held, the original marked by an earlier pass: still held, not superseded",
		mutate: func(in *plan.TemplateInput) {
			in.Requested, in.DryRun = plan.StrategyRotate, plan.DryRunNotRun
			in.Replacement = in.Desired.DeepCopy()
			in.Live.SetAnnotations(map[string]string{api.SupersededByAnnotation: replacementName})
			in.Holders = []manifest.ID{foreignMD}
		},
		want: plan.TemplatePlan{Outcome: plan.OutcomeHeld, Strategy: plan.StrategyRotate, Rotation: &plan.Rotation{To: replacementName, HeldBy: []manifest.ID{foreignMD}}},
	}, {
		name: "rotation held, replacement built from this release: held, not corrected",
		mutate: func(in *plan.TemplateInput) {
			in.Requested, in.DryRun = plan.StrategyRotate, plan.DryRunNotRun
			in.Replacement = in.Desired.DeepCopy()
			in.Replacement.SetAnnotations(map[string]string{api.SourceReleaseAnnotation: release})
			in.Holders = []manifest.ID{foreignMD}
		},
		want: plan.TemplatePlan{Outcome: plan.OutcomeHeld, Strategy: plan.StrategyRotate, Rotation: &plan.Rotation{To: replacementName, HeldBy: []manifest.ID{foreignMD}}},
	}, {
		name: "foreign consumers do not hold a recreate that nothing else blocks: only Users do",
		mutate: func(in *plan.TemplateInput) {
			in.Requested = plan.StrategyRecreate
			in.Holders = []manifest.ID{foreignMD}
		},
		want: plan.TemplatePlan{Outcome: plan.OutcomeDrifted, Strategy: plan.StrategyRecreate, Writes: recreate, DriftDigest: digest},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			desired, live := m3mtDesired, m3mtLive
			if tc.desired != "" {
				desired, live = tc.desired, tc.live
			}
			in := plan.TemplateInput{
				Desired:         fromYAML(t, desired),
				Live:            fromYAML(t, live),
				Changes:         drift,
				ReplacementName: replacementName,
				Requested:       plan.StrategyAuto,
				Helm:            csa,
				Release:         release,
			}
			if tc.mutate != nil {
				tc.mutate(&in)
			}
			got := plan.DecideTemplate(in)
			g.Expect(got.ID).To(Equal(manifest.IDOf(in.Desired)))
			g.Expect(got.Changes).To(Equal(in.Changes))
			g.Expect(got.Desired).To(BeIdenticalTo(in.Desired))
			g.Expect(got.Live).To(BeIdenticalTo(in.Live))
			got.ID, got.Changes, got.Desired, got.Live = manifest.ID{}, nil, nil, nil
			msg := got.Message
			if tc.wantContains != nil {
				rest := msg
				for _, s := range tc.wantContains {
					g.Expect(rest).To(ContainSubstring(s), "in order, in %q", msg)
					rest = rest[strings.Index(rest, s)+len(s):]
				}
				got.Message = ""
			}
			g.Expect(got).To(Equal(tc.want))
			if got.Outcome == plan.OutcomeBlocked {
				g.Expect(got.Writes).To(BeEmpty(), "a blocked correction writes nothing")
				g.Expect(got.DriftDigest).To(BeEmpty(), "no correction is recorded")
				g.Expect(plan.DecideTemplate(in).Message).To(Equal(msg), "the same facts give the same message on every pass")
			}
		})
	}
}
