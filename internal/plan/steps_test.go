package plan_test

import (
	"errors"
	"fmt"
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/plan"
)

// opsOf lists "<Op> <name>" of steps, in order.
func opsOf(steps []plan.Step) []string {
	var out []string
	for _, s := range steps {
		out = append(out, string(s.Op)+" "+s.ID.Name)
	}
	return out
}

func TestScriptOrder(t *testing.T) {
	rotate := templatePlan(t, "a", "data", plan.OutcomeDrifted, plan.WriteCreateReplacement, plan.WriteMarkSuperseded)
	inPlace := templatePlan(t, "a", "workers", plan.OutcomeDrifted, plan.WritePatch)
	recreate := templatePlan(t, "a", "cp", plan.OutcomeDrifted, plan.WriteDelete, plan.WriteCreate)
	missing := templatePlan(t, "a", "gone", plan.OutcomeMissing, plan.WriteCreate)
	failed := templatePlan(t, "a", "locked", plan.OutcomeFailed)
	unmark := templatePlan(t, "a", "back", plan.OutcomeInSync, plan.WriteUnmark)
	pruned := liveTemplateIn(t, "a", "old-0123456789")
	cases := []struct {
		name string
		// d are the decisions; Act is set by the test unless readOnly.
		d        plan.Decisions
		readOnly bool
		want     []string
	}{
		{name: "templates in dependency order, then repoints, then marks, then prunes; the Cluster blocked first; every delete confirmed unused from a fresh read just before",
			d: plan.Decisions{Templates: []plan.TemplatePlan{rotate, inPlace, recreate, missing, unmark},
				Consumers: []plan.ConsumerPlan{repointPlan(t, "a", "md")}, Prune: []*unstructured.Unstructured{pruned}},
			want: []string{"BlockMove mgmt", "Create data", "Patch workers", "ConfirmUnused cp", "Recreate cp", "Create gone",
				"Patch md", "Patch data", "Patch back", "ConfirmUnused old-0123456789", "Prune old-0123456789"}},
		{name: "a failed template stops the writes there: no repoint, mark or prune after it",
			d: plan.Decisions{Templates: []plan.TemplatePlan{inPlace, failed, rotate},
				Consumers: []plan.ConsumerPlan{repointPlan(t, "a", "md")}, Prune: []*unstructured.Unstructured{pruned}},
			want: []string{"Patch workers", "Stop locked"}},
		{name: "a lone in-place patch: no move block",
			d:    plan.Decisions{Templates: []plan.TemplatePlan{inPlace}},
			want: []string{"Patch workers"}},
		{name: "a pass that may not write has no steps",
			d:        plan.Decisions{Templates: []plan.TemplatePlan{rotate}, Consumers: []plan.ConsumerPlan{repointPlan(t, "a", "md")}},
			readOnly: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			tc.d.Act = !tc.readOnly
			got := plan.Script(tc.d, plan.ScriptInput{Clusters: []*unstructured.Unstructured{cluster(t, "a", "mgmt", nil)}})
			g.Expect(opsOf(got.Steps)).To(Equal(tc.want))
		})
	}
}

func TestScriptObjects(t *testing.T) {
	g := NewWithT(t)
	rel := plan.Release{Name: "cluster", Namespace: "a", Ref: "a/cluster.v2"}
	rotate := templatePlan(t, "a", "data", plan.OutcomeDrifted, plan.WriteCreateReplacement)
	recreate := templatePlan(t, "a", "cp", plan.OutcomeDrifted, plan.WriteDelete, plan.WriteCreate)
	missing := templatePlan(t, "a", "gone", plan.OutcomeMissing, plan.WriteCreate)
	missing.Live = nil
	owner := metav1.OwnerReference{APIVersion: "cluster.x-k8s.io/v1beta2", Kind: "MachineDeployment", Name: "md", UID: "now"}
	mgmt := cluster(t, "a", "mgmt", nil)
	mgmt.SetUID("cluster-uid")
	got := plan.Script(plan.Decisions{Act: true, Templates: []plan.TemplatePlan{rotate, recreate, missing}}, plan.ScriptInput{
		Release: rel, Clusters: []*unstructured.Unstructured{mgmt, cluster(t, "b", "other", nil)},
		Owners: map[manifest.ID][]metav1.OwnerReference{rotate.ID: {owner}, recreate.ID: {owner}},
	})
	g.Expect(opsOf(got.Steps)).To(Equal([]string{"BlockMove mgmt", "Create data", "ConfirmUnused cp", "Recreate cp", "Create gone"}))

	replacement := got.Steps[1].Object
	g.Expect(replacement.GetName()).To(Equal("data-1"))
	g.Expect(replacement.GetOwnerReferences()).To(ConsistOf(owner), "the replacement takes over the owners gathered")
	g.Expect(replacement.GetAnnotations()).To(HaveKeyWithValue(api.ReplacesAnnotation, "data"))
	g.Expect(got.Steps[1].Chained).To(BeTrue())

	g.Expect(got.Steps[2].Users).To(Equal(manifest.UserKinds()), "every kind that may use a template is listed again")
	g.Expect(got.Steps[2].Writes()).To(BeZero())
	g.Expect(got.Steps[3].Live).To(BeIdenticalTo(recreate.Live), "a recreate deletes the live template as read")
	g.Expect(got.Steps[3].Object.GetOwnerReferences()).To(ConsistOf(owner))
	g.Expect(got.Steps[3].Writes()).To(Equal(2), "delete and create")

	created := got.Steps[4].Object
	g.Expect(created.GetOwnerReferences()).To(ConsistOf(metav1.OwnerReference{APIVersion: "cluster.x-k8s.io/v1beta2", Kind: "Cluster", Name: "mgmt", UID: "cluster-uid"}),
		"a missing template is owned by its namespace's Clusters only")
	g.Expect(created.GetAnnotations()).To(HaveKeyWithValue(api.HelmReleaseNameAnnotation, "cluster"))
	g.Expect(got.Steps[4].Chained).To(BeFalse(), "a create of a missing template is whole in one write")
}

func TestLifts(t *testing.T) {
	ours := map[string]string{api.BlockMoveAnnotation: api.ControllerName}
	rotation := plan.Decisions{Act: true,
		Templates: []plan.TemplatePlan{templatePlan(t, "a", "data", plan.OutcomeDrifted, plan.WriteCreateReplacement, plan.WriteMarkSuperseded)},
		Consumers: []plan.ConsumerPlan{repointPlan(t, "a", "md")}}
	gr := schema.GroupResource{Group: "infrastructure.cluster.x-k8s.io", Resource: "metal3datatemplates"}
	unavailable := fmt.Errorf("failed to create: %w", apierrors.NewServiceUnavailable("etcd leader changed"))
	throttled := fmt.Errorf("failed to patch: %w", apierrors.NewTooManyRequests("slow down", 1))
	refused := fmt.Errorf("failed to create: %w", apierrors.NewInvalid(schema.GroupKind{Group: gr.Group, Kind: "Metal3DataTemplate"}, "data-1", nil))
	conflict := fmt.Errorf("failed to patch: %w", apierrors.NewConflict(gr, "md", errors.New("changed")))
	// Clusters: mgmt is blocked by this pass; left was blocked by an
	// earlier pass that did not end.
	clusters := []*unstructured.Unstructured{cluster(t, "a", "mgmt", nil), cluster(t, "b", "left", ours)}
	cases := []struct {
		name string
		done plan.Progress
		want []string
	}{
		{name: "every step made: every block lifted", done: plan.Progress{Writes: 3},
			want: []string{"UnblockMove mgmt", "UnblockMove left"}},
		{name: "a failure after a write: every block kept for the pass that finishes the correction",
			done: plan.Progress{Writes: 1, Err: refused}},
		{name: "a failure after a prune only: kept too",
			done: plan.Progress{Pruned: []manifest.ID{{Name: "old"}}, Err: refused}},
		{name: "a 503 before any write: kept, the retry finds its own block and sets none again",
			done: plan.Progress{Err: unavailable}},
		{name: "a 429 before any write: kept", done: plan.Progress{Err: throttled}},
		{name: "a lost race (409) before any write: kept, the retry reads again",
			done: plan.Progress{Err: conflict}},
		{name: "a refusal before any write: every block lifted, the correction does not go on by itself",
			done: plan.Progress{Err: refused}, want: []string{"UnblockMove mgmt", "UnblockMove left"}},
		{name: "a template whose correction failed stops the pass before any write: every block lifted, an earlier pass's too",
			done: plan.Progress{Err: errors.New("Metal3MachineTemplate/workers: in-place correction refused: denied")},
			want: []string{"UnblockMove mgmt", "UnblockMove left"}},
		{name: "a Cluster found paused before the first write: every block lifted",
			done: plan.Progress{Err: errors.New("object changed during correction: Cluster a/mgmt was paused")},
			want: []string{"UnblockMove mgmt", "UnblockMove left"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			script := plan.Script(rotation, plan.ScriptInput{Clusters: clusters})
			g.Expect(names(script.Block)).To(Equal([]string{"a/mgmt"}))
			g.Expect(opsOf(script.Lifts(tc.done))).To(Equal(tc.want))
			g.Expect(script.KeptBlocks(tc.done)).To(Equal(2 - len(tc.want)))
		})
	}
}
