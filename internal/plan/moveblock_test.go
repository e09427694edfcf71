package plan_test

import (
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/diff"
	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/plan"
)

// cluster is a live Cluster of namespace ns, with annotations.
func cluster(t *testing.T, ns, name string, annotations map[string]string) *unstructured.Unstructured {
	t.Helper()
	o := fromYAML(t, `
apiVersion: cluster.x-k8s.io/v1beta2
kind: Cluster
metadata: {name: `+name+`, namespace: `+ns+`}
`)
	o.SetAnnotations(annotations)
	return o
}

// names lists "<ns>/<name>" of objs.
func names(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetNamespace()+"/"+o.GetName())
	}
	return out
}

func TestDecideMoveBlock(t *testing.T) {
	ours := map[string]string{api.BlockMoveAnnotation: api.ControllerName}
	theirs := map[string]string{api.BlockMoveAnnotation: "another-controller"}
	tmpl := func(ns string, outcome plan.Outcome, writes ...plan.Write) plan.TemplatePlan {
		return templatePlan(t, ns, "workers", outcome, writes...)
	}
	repoint := func(ns string) plan.ConsumerPlan { return repointPlan(t, ns, "workers") }
	rotation := plan.Decisions{Act: true,
		Templates: []plan.TemplatePlan{tmpl("a", plan.OutcomeDrifted, plan.WriteCreateReplacement, plan.WriteMarkSuperseded)},
		Consumers: []plan.ConsumerPlan{repoint("a")}}
	cases := []struct {
		name             string
		d                plan.Decisions
		clusters         []*unstructured.Unstructured
		block, unblocked []string
	}{
		{name: "an in-place patch is one write: no move block",
			d:        plan.Decisions{Act: true, Templates: []plan.TemplatePlan{tmpl("a", plan.OutcomeDrifted, plan.WritePatch)}},
			clusters: []*unstructured.Unstructured{cluster(t, "a", "mgmt", nil)}},
		{name: "a lone repoint is one write: no move block",
			d:        plan.Decisions{Act: true, Consumers: []plan.ConsumerPlan{repoint("a")}},
			clusters: []*unstructured.Unstructured{cluster(t, "a", "mgmt", nil)}},
		{name: "a rotation blocks its namespace's Clusters",
			d:        rotation,
			clusters: []*unstructured.Unstructured{cluster(t, "a", "mgmt", nil), cluster(t, "b", "other", nil)},
			block:    []string{"a/mgmt"}, unblocked: []string{"a/mgmt"}},
		{name: "a recreate (delete, create) blocks",
			d:        plan.Decisions{Act: true, Templates: []plan.TemplatePlan{tmpl("a", plan.OutcomeDrifted, plan.WriteDelete, plan.WriteCreate)}},
			clusters: []*unstructured.Unstructured{cluster(t, "a", "mgmt", nil)},
			block:    []string{"a/mgmt"}, unblocked: []string{"a/mgmt"}},
		{name: "a prune beside a repoint blocks",
			d:        plan.Decisions{Act: true, Consumers: []plan.ConsumerPlan{repoint("a")}, Prune: []*unstructured.Unstructured{liveTemplateIn(t, "a", "workers-0")}},
			clusters: []*unstructured.Unstructured{cluster(t, "a", "mgmt", nil)},
			block:    []string{"a/mgmt"}, unblocked: []string{"a/mgmt"}},
		{name: "two in-place patches are whole each: no move block",
			d: plan.Decisions{Act: true, Templates: []plan.TemplatePlan{tmpl("a", plan.OutcomeDrifted, plan.WritePatch),
				tmpl("a", plan.OutcomeDrifted, plan.WritePatch), tmpl("a", plan.OutcomeMissing, plan.WriteCreate)}},
			clusters: []*unstructured.Unstructured{cluster(t, "a", "mgmt", nil)}},
		{name: "a lone superseded-by mark (the consumers moved already): no move block",
			d:        plan.Decisions{Act: true, Templates: []plan.TemplatePlan{tmpl("a", plan.OutcomeDrifted, plan.WriteMarkSuperseded)}},
			clusters: []*unstructured.Unstructured{cluster(t, "a", "mgmt", nil)}},
		{name: "the way back (repoint, unmark) blocks",
			d: plan.Decisions{Act: true, Templates: []plan.TemplatePlan{tmpl("a", plan.OutcomeInSync, plan.WriteUnmark)},
				Consumers: []plan.ConsumerPlan{repoint("a")}},
			clusters: []*unstructured.Unstructured{cluster(t, "a", "mgmt", nil)},
			block:    []string{"a/mgmt"}, unblocked: []string{"a/mgmt"}},
		{name: "a rotation's writes in two namespaces, one in each: no move block",
			d: plan.Decisions{Act: true, Templates: []plan.TemplatePlan{tmpl("a", plan.OutcomeDrifted, plan.WriteCreateReplacement)},
				Consumers: []plan.ConsumerPlan{repoint("b")}},
			clusters: []*unstructured.Unstructured{cluster(t, "a", "mgmt", nil), cluster(t, "b", "other", nil)}},
		{name: "a failed first template stops every write: no move block",
			d: plan.Decisions{Act: true, Templates: []plan.TemplatePlan{tmpl("a", plan.OutcomeFailed),
				tmpl("a", plan.OutcomeDrifted, plan.WriteDelete, plan.WriteCreate)}, Consumers: []plan.ConsumerPlan{repoint("a")}},
			clusters: []*unstructured.Unstructured{cluster(t, "a", "mgmt", nil)}},
		{name: "a Cluster already blocked by the add-on is unblocked, not blocked again",
			d:         rotation,
			clusters:  []*unstructured.Unstructured{cluster(t, "a", "mgmt", ours)},
			unblocked: []string{"a/mgmt"}},
		{name: "a move block left by a pass that did not end is lifted by a pass with no writes",
			d:         plan.Decisions{Act: true},
			clusters:  []*unstructured.Unstructured{cluster(t, "a", "mgmt", ours), cluster(t, "a", "spare", nil)},
			unblocked: []string{"a/mgmt"}},
		{name: "another controller's move block is left alone",
			d:        rotation,
			clusters: []*unstructured.Unstructured{cluster(t, "a", "mgmt", theirs)}},
		{name: "a pass that may not write blocks and lifts nothing",
			d:        plan.Decisions{Act: false, Templates: rotation.Templates, Consumers: rotation.Consumers},
			clusters: []*unstructured.Unstructured{cluster(t, "a", "mgmt", ours)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			got := plan.Script(tc.d, plan.ScriptInput{Clusters: tc.clusters})
			g.Expect(names(got.Block)).To(Equal(tc.block))
			g.Expect(names(got.Unblock)).To(Equal(tc.unblocked))
		})
	}
}

// templatePlan is the plan of a live Metal3MachineTemplate ns/name with
// outcome and writes, rotated to name-1 when a write needs it.
func templatePlan(t *testing.T, ns, name string, outcome plan.Outcome, writes ...plan.Write) plan.TemplatePlan {
	t.Helper()
	live := liveTemplateIn(t, ns, name)
	tp := plan.TemplatePlan{ID: manifest.IDOf(live), Outcome: outcome, Writes: writes, Desired: live.DeepCopy(), Live: live,
		Message: "refused"}
	for _, w := range writes {
		if w == plan.WriteCreateReplacement || w == plan.WriteMarkSuperseded {
			tp.Rotation = &plan.Rotation{To: name + "-1"}
		}
	}
	return tp
}

// repointPlan is the plan of a live MachineDeployment ns/name repointed to
// a replacement.
func repointPlan(t *testing.T, ns, name string) plan.ConsumerPlan {
	t.Helper()
	return plan.ConsumerPlan{ID: id(manifest.MachineDeploymentKind, ns, name),
		Changes: []diff.Change{{Path: "/spec/template/spec/infrastructureRef/name", Op: diff.OpReplace, After: name + "-1"}}}
}

// liveTemplateIn is a live Metal3MachineTemplate of namespace ns.
func liveTemplateIn(t *testing.T, ns, name string) *unstructured.Unstructured {
	t.Helper()
	o := liveTemplate(t, "Metal3MachineTemplate", name, nil)
	o.SetNamespace(ns)
	return o
}

func TestMoveBlockChanges(t *testing.T) {
	g := NewWithT(t)
	bare := cluster(t, "a", "mgmt", nil)
	marked, err := diff.Apply(bare, plan.BlockMoveChanges(bare))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(marked.GetAnnotations()).To(HaveKeyWithValue(api.BlockMoveAnnotation, api.ControllerName))

	annotated := cluster(t, "a", "mgmt", map[string]string{"keep": "me"})
	marked, err = diff.Apply(annotated, plan.BlockMoveChanges(annotated))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(marked.GetAnnotations()).To(Equal(map[string]string{"keep": "me", api.BlockMoveAnnotation: api.ControllerName}))

	unmarked, err := diff.Apply(marked, plan.UnblockMoveChanges())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(unmarked.GetAnnotations()).To(Equal(map[string]string{"keep": "me"}))
}
