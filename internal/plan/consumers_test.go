package plan_test

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/diff"
	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/plan"
)

const (
	mdV1beta2 = `
apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineDeployment
metadata: {name: md-0, namespace: fleet}
spec:
  template:
    spec:
      bootstrap:
        configRef: {apiGroup: bootstrap.cluster.x-k8s.io, kind: KubeadmConfigTemplate, name: workers}
      infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: Metal3MachineTemplate, name: workers}
`
	mdV1beta1 = `
apiVersion: cluster.x-k8s.io/v1beta1
kind: MachineDeployment
metadata: {name: md-0, namespace: fleet}
spec:
  template:
    spec:
      bootstrap:
        configRef: {apiVersion: bootstrap.cluster.x-k8s.io/v1beta1, kind: KubeadmConfigTemplate, name: workers}
      infrastructureRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: Metal3MachineTemplate, name: workers}
`
	kcpV1beta1 = `
apiVersion: controlplane.cluster.x-k8s.io/v1beta1
kind: KubeadmControlPlane
metadata: {name: cp, namespace: fleet}
spec:
  machineTemplate:
    infrastructureRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: Metal3MachineTemplate, name: workers}
`
	kcpV1beta2 = `
apiVersion: controlplane.cluster.x-k8s.io/v1beta2
kind: KubeadmControlPlane
metadata: {name: cp, namespace: fleet}
spec:
  machineTemplate:
    spec:
      infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: Metal3MachineTemplate, name: workers}
`
	rke2V1beta1 = `
apiVersion: controlplane.cluster.x-k8s.io/v1beta1
kind: RKE2ControlPlane
metadata: {name: rke2, namespace: fleet}
spec:
  infrastructureRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: Metal3MachineTemplate, name: workers}
  machineTemplate:
    infrastructureRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: Metal3MachineTemplate, name: workers}
`
	m3mtConsumer = `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: Metal3MachineTemplate
metadata: {name: workers, namespace: fleet}
spec:
  template:
    spec:
      dataTemplate: {name: workers-data}
`
	mdCrossNamespace = `
apiVersion: cluster.x-k8s.io/v1beta1
kind: MachineDeployment
metadata: {name: md-0, namespace: fleet}
spec:
  template:
    spec:
      infrastructureRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: Metal3MachineTemplate, name: workers, namespace: tenant-b}
`
	mdSameNamespaceExplicit = `
apiVersion: cluster.x-k8s.io/v1beta1
kind: MachineDeployment
metadata: {name: md-0, namespace: fleet}
spec:
  template:
    spec:
      infrastructureRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: Metal3MachineTemplate, name: workers, namespace: fleet}
`
)

// bootstrapKind is the kind of MachineDeployment bootstrap config templates.
var bootstrapKind = schema.GroupKind{Group: "bootstrap.cluster.x-k8s.io", Kind: "KubeadmConfigTemplate"}

// rotation is a table's way to write a target: consumers of From must
// point at To.
type rotation struct {
	From   manifest.ID
	To     string
	Marked bool
}

func targetsOf(rots []rotation) map[manifest.ID]plan.Destination {
	out := map[manifest.ID]plan.Destination{}
	for _, r := range rots {
		out[r.From] = plan.Destination{Name: r.To, Marked: r.Marked}
	}
	return out
}

func TestDecideConsumer(t *testing.T) {
	const to = "workers-5f1c2a9b0d"
	m3mt := id(manifest.Metal3MachineTemplateKind, "fleet", "workers")
	rot := rotation{From: m3mt, To: to}
	marked := rotation{From: m3mt, To: to, Marked: true}
	change := func(path string) diff.Change {
		return diff.Change{Path: path, Op: diff.OpReplace, Before: "workers", After: to}
	}
	mdPath := "/spec/template/spec/infrastructureRef/name"

	cases := []struct {
		name         string                      // what the case proves
		live         string                      // live consumer as YAML
		rotations    []rotation                  // targets of the release's templates
		replaces     map[manifest.ID]manifest.ID // replacements to their originals
		wantID       manifest.ID                 // ID of the plan
		wantChanges  []diff.Change               // reference rewrites, in table order
		wantReverted bool                        // a reference had been set back
		wantErr      error                       // error the result must wrap
	}{{
		name:        "MachineDeployment v1beta2 {apiGroup,kind,name}; the bootstrap ref of the same name is another kind",
		live:        mdV1beta2,
		rotations:   []rotation{rot},
		wantID:      id(manifest.MachineDeploymentKind, "fleet", "md-0"),
		wantChanges: []diff.Change{change(mdPath)},
	}, {
		name:        "MachineDeployment v1beta1 {apiVersion,kind,name}",
		live:        mdV1beta1,
		rotations:   []rotation{rot},
		wantID:      id(manifest.MachineDeploymentKind, "fleet", "md-0"),
		wantChanges: []diff.Change{change(mdPath)},
	}, {
		name:        "MachineDeployment with an explicit same-namespace reference",
		live:        mdSameNamespaceExplicit,
		rotations:   []rotation{rot},
		wantID:      id(manifest.MachineDeploymentKind, "fleet", "md-0"),
		wantChanges: []diff.Change{change(mdPath)},
	}, {
		name:        "KubeadmControlPlane v1beta1 .spec.machineTemplate.infrastructureRef",
		live:        kcpV1beta1,
		rotations:   []rotation{rot},
		wantID:      id(manifest.KubeadmControlPlaneKind, "fleet", "cp"),
		wantChanges: []diff.Change{change("/spec/machineTemplate/infrastructureRef/name")},
	}, {
		name:        "KubeadmControlPlane v1beta2 .spec.machineTemplate.spec.infrastructureRef",
		live:        kcpV1beta2,
		rotations:   []rotation{rot},
		wantID:      id(manifest.KubeadmControlPlaneKind, "fleet", "cp"),
		wantChanges: []diff.Change{change("/spec/machineTemplate/spec/infrastructureRef/name")},
	}, {
		name:      "RKE2ControlPlane v1beta1 with both fields: two changes",
		live:      rke2V1beta1,
		rotations: []rotation{rot},
		wantID:    id(manifest.RKE2ControlPlaneKind, "fleet", "rke2"),
		wantChanges: []diff.Change{
			change("/spec/infrastructureRef/name"),
			change("/spec/machineTemplate/infrastructureRef/name"),
		},
	}, {
		name:         "marked rotation that applies: reverted",
		live:         mdV1beta2,
		rotations:    []rotation{marked},
		wantID:       id(manifest.MachineDeploymentKind, "fleet", "md-0"),
		wantChanges:  []diff.Change{change(mdPath)},
		wantReverted: true,
	}, {
		name: "marked rotation that does not apply: not reverted",
		live: mdV1beta2,
		rotations: []rotation{
			{From: id(manifest.Metal3DataTemplateKind, "fleet", "workers-data"), To: "workers-data-1", Marked: true},
			rot,
		},
		wantID:      id(manifest.MachineDeploymentKind, "fleet", "md-0"),
		wantChanges: []diff.Change{change(mdPath)},
	}, {
		name: "a marked rotation stays reverted when a later unmarked one also applies",
		live: mdV1beta2,
		rotations: []rotation{
			marked,
			{From: id(bootstrapKind, "fleet", "workers"), To: "workers-boot-1"},
		},
		wantID: id(manifest.MachineDeploymentKind, "fleet", "md-0"),
		wantChanges: []diff.Change{
			change(mdPath),
			{Path: "/spec/template/spec/bootstrap/configRef/name", Op: diff.OpReplace, Before: "workers", After: "workers-boot-1"},
		},
		wantReverted: true,
	}, {
		name:      "already repointed: no change, not reverted, no roll",
		live:      mdV1beta2,
		rotations: []rotation{{From: m3mt, To: "workers", Marked: true}},
		wantID:    id(manifest.MachineDeploymentKind, "fleet", "md-0"),
	}, {
		name:      "rotation of a template in another namespace: no change",
		live:      mdV1beta2,
		rotations: []rotation{{From: id(manifest.Metal3MachineTemplateKind, "other", "workers"), To: to, Marked: true}},
		wantID:    id(manifest.MachineDeploymentKind, "fleet", "md-0"),
	}, {
		name:   "no rotations: no change",
		live:   kcpV1beta2,
		wantID: id(manifest.KubeadmControlPlaneKind, "fleet", "cp"),
	}, {
		name:      "Metal3MachineTemplate repointed to a rotated data template: change, no roll",
		live:      m3mtConsumer,
		rotations: []rotation{{From: id(manifest.Metal3DataTemplateKind, "fleet", "workers-data"), To: "workers-data-1"}},
		wantID:    id(manifest.Metal3MachineTemplateKind, "fleet", "workers"),
		wantChanges: []diff.Change{{Path: "/spec/template/spec/dataTemplate/name", Op: diff.OpReplace,
			Before: "workers-data", After: "workers-data-1"}},
	}, {
		name:        "chain: a consumer left on the first replacement moves to the newest",
		live:        strings.Replace(mdV1beta2, "kind: Metal3MachineTemplate, name: workers}", "kind: Metal3MachineTemplate, name: workers-first}", 1),
		rotations:   []rotation{rot},
		replaces:    map[manifest.ID]manifest.ID{id(manifest.Metal3MachineTemplateKind, "fleet", "workers-first"): m3mt},
		wantID:      id(manifest.MachineDeploymentKind, "fleet", "md-0"),
		wantChanges: []diff.Change{{Path: mdPath, Op: diff.OpReplace, Before: "workers-first", After: to}},
	}, {
		name:        "way back: the original matches the manifest again, the consumer leaves the replacement",
		live:        strings.Replace(mdV1beta2, "kind: Metal3MachineTemplate, name: workers}", "kind: Metal3MachineTemplate, name: workers-first}", 1),
		rotations:   []rotation{{From: m3mt, To: "workers"}},
		replaces:    map[manifest.ID]manifest.ID{id(manifest.Metal3MachineTemplateKind, "fleet", "workers-first"): m3mt},
		wantID:      id(manifest.MachineDeploymentKind, "fleet", "md-0"),
		wantChanges: []diff.Change{{Path: mdPath, Op: diff.OpReplace, Before: "workers-first", After: "workers"}},
	}, {
		name:      "a reference to a template that is no replacement of the release's is left alone",
		live:      strings.Replace(mdV1beta2, "kind: Metal3MachineTemplate, name: workers}", "kind: Metal3MachineTemplate, name: hand-made}", 1),
		rotations: []rotation{rot},
		wantID:    id(manifest.MachineDeploymentKind, "fleet", "md-0"),
	}, {
		name:        "a replacement of the original with a marked rotation: moved, but not reported set back",
		live:        strings.Replace(mdV1beta2, "kind: Metal3MachineTemplate, name: workers}", "kind: Metal3MachineTemplate, name: workers-first}", 1),
		rotations:   []rotation{marked},
		replaces:    map[manifest.ID]manifest.ID{id(manifest.Metal3MachineTemplateKind, "fleet", "workers-first"): m3mt},
		wantID:      id(manifest.MachineDeploymentKind, "fleet", "md-0"),
		wantChanges: []diff.Change{{Path: mdPath, Op: diff.OpReplace, Before: "workers-first", After: to}},
	}, {
		name:        "MachinePool is a consumer too",
		live:        strings.Replace(mdV1beta2, "kind: MachineDeployment", "kind: MachinePool", 1),
		rotations:   []rotation{rot},
		wantID:      id(manifest.MachinePoolKind, "fleet", "md-0"),
		wantChanges: []diff.Change{change(mdPath)},
	}, {
		name:      "reference into another namespace: error",
		live:      mdCrossNamespace,
		rotations: []rotation{rot},
		wantID:    id(manifest.MachineDeploymentKind, "fleet", "md-0"),
		wantErr:   manifest.ErrCrossNamespaceRef,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			live := fromYAML(t, tc.live)
			before := live.DeepCopy()
			got, err := plan.DecideConsumer(live, targetsOf(tc.rotations), tc.replaces)
			g.Expect(live).To(Equal(before), "the live consumer must not be mutated")
			g.Expect(got.ID).To(Equal(tc.wantID))
			if tc.wantErr != nil {
				g.Expect(err).To(MatchError(tc.wantErr))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			if tc.wantChanges == nil {
				g.Expect(got.Changes).To(BeEmpty())
			} else {
				g.Expect(got.Changes).To(Equal(tc.wantChanges))
			}
			g.Expect(got.RevertedFrom != nil).To(Equal(tc.wantReverted))
			if tc.wantReverted {
				// Only the rotations that were set back are named, so the
				// event names the right template.
				g.Expect(got.RevertedFrom).To(ConsistOf(marked.From))
			} else {
				g.Expect(got.RevertedFrom).To(BeEmpty())
			}
		})
	}
}

func TestIsMarked(t *testing.T) {
	const to = "workers-5f1c2a9b0d"
	cases := []struct {
		name string // what the case proves
		live string // live template as YAML; "" for nil
		want bool   // IsMarked(live, to)
	}{{
		name: "nil live object",
	}, {
		name: "no annotations",
		live: `{apiVersion: v1, kind: ConfigMap, metadata: {name: a, namespace: fleet}}`,
	}, {
		name: "marked for another replacement",
		live: `{apiVersion: v1, kind: ConfigMap, metadata: {name: a, namespace: fleet, annotations: {` + api.SupersededByAnnotation + `: workers-0000000000}}}`,
	}, {
		name: "other annotation with the same value",
		live: `{apiVersion: v1, kind: ConfigMap, metadata: {name: a, namespace: fleet, annotations: {` + api.ReplacesAnnotation + `: ` + to + `}}}`,
	}, {
		name: "marked for this replacement",
		live: `{apiVersion: v1, kind: ConfigMap, metadata: {name: a, namespace: fleet, annotations: {` + api.SupersededByAnnotation + `: ` + to + `}}}`,
		want: true,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			if tc.live == "" {
				g.Expect(plan.IsMarked(nil, to)).To(Equal(tc.want))
				return
			}
			g.Expect(plan.IsMarked(fromYAML(t, tc.live), to)).To(Equal(tc.want))
		})
	}
}

// TestFinishTemplatesRollouts: a rotation rolls machines when a
// MachineDeployment or control plane references the original or its
// replacement; a consumer set back marks the template reverted.
func TestFinishTemplatesRollouts(t *testing.T) {
	const to = "workers-5f1c2a9b0d"
	m3mt := id(manifest.Metal3MachineTemplateKind, "fleet", "workers")
	data := id(manifest.Metal3DataTemplateKind, "fleet", "workers-data")
	// repointed is mdV1beta2 once its infrastructure reference names the replacement.
	repointed := strings.Replace(mdV1beta2, "Metal3MachineTemplate, name: workers}", "Metal3MachineTemplate, name: "+to+"}", 1)
	rotating := plan.TemplatePlan{ID: m3mt, Outcome: plan.OutcomeDrifted, Strategy: plan.StrategyRotate, Rotation: &plan.Rotation{To: to}}

	cases := []struct {
		name string // what the case proves
		// template is the one template marked.
		template plan.TemplatePlan
		// consumers are the live consumers as YAML.
		consumers []string
		// revertedFrom is RevertedFrom of the first consumer.
		revertedFrom []manifest.ID
		// wantRolls and wantReverted are the template's flags afterwards.
		wantRolls, wantReverted bool
	}{{
		name:      "a MachineDeployment referencing the original rolls machines (the pass that rotates)",
		template:  rotating,
		consumers: []string{mdV1beta2},
		wantRolls: true,
	}, {
		name:      "a MachineDeployment referencing the replacement rolls machines (every pass after)",
		template:  plan.TemplatePlan{ID: m3mt, Outcome: plan.OutcomeCorrected, Strategy: plan.StrategyRotate, Rotation: &plan.Rotation{To: to}},
		consumers: []string{repointed},
		wantRolls: true,
	}, {
		name:      "a control plane referencing the original rolls machines",
		template:  rotating,
		consumers: []string{kcpV1beta2},
		wantRolls: true,
	}, {
		name:      "a Metal3MachineTemplate consumer of a rotated data template does not roll machines",
		template:  plan.TemplatePlan{ID: data, Outcome: plan.OutcomeDrifted, Strategy: plan.StrategyRotate, Rotation: &plan.Rotation{To: "workers-data-1"}},
		consumers: []string{m3mtConsumer, mdV1beta2},
	}, {
		name:      "a template that does not rotate does not roll machines, even referenced",
		template:  plan.TemplatePlan{ID: m3mt, Outcome: plan.OutcomeDrifted, Strategy: plan.StrategyInPlace},
		consumers: []string{mdV1beta2},
	}, {
		name:      "a MachineDeployment referencing another template does not roll this one's machines",
		template:  plan.TemplatePlan{ID: id(manifest.Metal3MachineTemplateKind, "fleet", "cp-template"), Outcome: plan.OutcomeDrifted, Strategy: plan.StrategyRotate, Rotation: &plan.Rotation{To: "cp-template-1"}},
		consumers: []string{mdV1beta2},
	}, {
		name: "a reference naming the replacement with another kind does not count",
		template: plan.TemplatePlan{ID: id(manifest.Metal3DataTemplateKind, "fleet", "other"), Outcome: plan.OutcomeDrifted,
			Strategy: plan.StrategyRotate, Rotation: &plan.Rotation{To: "workers"}},
		consumers: []string{mdV1beta2},
	}, {
		name: "a MachineDeployment of another namespace naming a template like the replacement does not count",
		template: plan.TemplatePlan{ID: id(manifest.Metal3MachineTemplateKind, "other", "x"), Outcome: plan.OutcomeDrifted,
			Strategy: plan.StrategyRotate, Rotation: &plan.Rotation{To: to}},
		consumers: []string{repointed},
	}, {
		name:         "RevertedFrom naming the template sets Reverted",
		template:     rotating,
		consumers:    []string{mdV1beta2},
		revertedFrom: []manifest.ID{m3mt},
		wantRolls:    true,
		wantReverted: true,
	}, {
		name:         "RevertedFrom naming another template does not",
		template:     rotating,
		consumers:    []string{mdV1beta2},
		revertedFrom: []manifest.ID{data},
		wantRolls:    true,
	}, {
		name:     "no consumers",
		template: rotating,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			var consumers []plan.ConsumerPlan
			for i, y := range tc.consumers {
				live := fromYAML(t, y)
				cp := plan.ConsumerPlan{ID: manifest.IDOf(live), Live: live}
				if i == 0 {
					cp.RevertedFrom = tc.revertedFrom
				}
				consumers = append(consumers, cp)
			}
			templates := []plan.TemplatePlan{tc.template}
			got := plan.FinishTemplates(templates, consumers)
			g.Expect(got[0].RollsMachines).To(Equal(tc.wantRolls))
			g.Expect(got[0].Reverted()).To(Equal(tc.wantReverted))
			want := tc.template
			want.RollsMachines = tc.wantRolls
			if want.Rotation != nil {
				r := *want.Rotation
				r.Reverted = tc.wantReverted
				want.Rotation = &r
			}
			g.Expect(got[0]).To(Equal(want), "no other field changes")
			g.Expect(templates[0]).To(Equal(tc.template), "the decision given is not changed")
		})
	}
}

// TestFinishTemplatesSeveral: each template is finished from its own
// references.
func TestFinishTemplatesSeveral(t *testing.T) {
	g := NewWithT(t)
	templates := []plan.TemplatePlan{
		{ID: id(manifest.Metal3DataTemplateKind, "fleet", "workers-data"), Strategy: plan.StrategyRotate, Rotation: &plan.Rotation{To: "workers-data-1"}},
		{ID: id(manifest.Metal3MachineTemplateKind, "fleet", "workers"), Strategy: plan.StrategyRotate, Rotation: &plan.Rotation{To: "workers-1"}},
	}
	md := fromYAML(t, mdV1beta1)
	m3 := fromYAML(t, m3mtConsumer)
	templates = plan.FinishTemplates(templates, []plan.ConsumerPlan{
		{ID: manifest.IDOf(m3), Live: m3, RevertedFrom: []manifest.ID{templates[0].ID}},
		{ID: manifest.IDOf(md), Live: md},
	})
	g.Expect(templates[0].RollsMachines).To(BeFalse())
	g.Expect(templates[0].Reverted()).To(BeTrue())
	g.Expect(templates[1].RollsMachines).To(BeTrue())
	g.Expect(templates[1].Reverted()).To(BeFalse())
}
