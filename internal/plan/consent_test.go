package plan_test

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/plan"
)

// The fixtures of the consent tables: a release whose Metal3MachineTemplate
// "workers" rotates to rotatedTo, used by MachineDeployment md-0 (2
// Machines); and a Metal3DataTemplate rotation that only repoints the
// Metal3MachineTemplate, which rolls nothing.
const rotatedTo = "workers-5f1c2a9b0d"

var (
	consentRelease = plan.Release{Name: "cluster", Namespace: "fleet", Ref: "fleet/cluster.v2"}
	workersID      = id(manifest.Metal3MachineTemplateKind, "fleet", "workers")
	dataID         = id(manifest.Metal3DataTemplateKind, "fleet", "workers-data")
)

// rotating is the decision of a template that rotates, its replacement still
// to create and the original to mark.
func rotating(tid manifest.ID, to string) plan.TemplatePlan {
	live := &unstructured.Unstructured{Object: map[string]any{"apiVersion": tid.Group + "/v1beta1", "kind": tid.Kind,
		"metadata": map[string]any{"name": tid.Name, "namespace": "fleet"}, "spec": map[string]any{}}}
	return plan.TemplatePlan{ID: tid, Desired: live.DeepCopy(), Live: live, Outcome: plan.OutcomeDrifted, Strategy: plan.StrategyRotate,
		Rotation: &plan.Rotation{To: to}, Writes: []plan.Write{plan.WriteCreateReplacement, plan.WriteMarkSuperseded}}
}

// md0 is MachineDeployment md-0 with 2 replicas, 2 Machines, and the
// annotations given (nil: none).
func md0(t *testing.T, annotations string) *unstructured.Unstructured {
	t.Helper()
	y := strings.Replace(mdV1beta2, "{name: md-0, namespace: fleet}", "{name: md-0, namespace: fleet"+annotations+"}", 1)
	o := fromYAML(t, y)
	g := NewWithT(t)
	g.Expect(unstructured.SetNestedField(o.Object, int64(2), "spec", "replicas")).To(Succeed())
	g.Expect(unstructured.SetNestedField(o.Object, int64(2), "status", "replicas")).To(Succeed())
	return o
}

// decide runs DecideRelease over templates and consumers under opts.
func decide(t *testing.T, opts plan.Options, budgetSpent bool, templates []plan.TemplatePlan, consumers ...*unstructured.Unstructured) plan.Decisions {
	t.Helper()
	opts.Mode = plan.ModeEnabled
	d, err := plan.DecideRelease(plan.ReleaseInput{Options: opts, Act: true, Release: consentRelease,
		Templates: templates, Consumers: consumers, Users: plan.Users{}, BudgetSpent: budgetSpent})
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	return d
}

// idNow is the id of the workers rotation as md-0 reads now.
func idNow(t *testing.T, md *unstructured.Unstructured) string {
	t.Helper()
	d := decide(t, plan.Options{Rollouts: plan.RolloutsDeny}, false, []plan.TemplatePlan{rotating(workersID, rotatedTo)}, md)
	NewWithT(t).Expect(d.Templates[0].Rollout).NotTo(BeNil())
	return d.Templates[0].Rollout.ID
}

// TestRolloutPolicy: a rotation that repoints a MachineDeployment rolls
// Machines. Under deny it waits and nothing is written for it (no
// replacement, no repoint, no mark), while a rotation that rolls nothing in
// the same release is made; allow and an approved id make it, and the
// repoint records the id on the consumer; a spent budget holds back what
// would start.
func TestRolloutPolicy(t *testing.T) {
	md := md0(t, "")
	rolloutID := idNow(t, md)
	cases := []struct {
		name        string
		opts        plan.Options
		budgetSpent bool
		wantState   plan.RolloutState
		wantWait    bool
		wantUsed    []plan.Approval
	}{
		{name: "deny: waits for approval", opts: plan.Options{Rollouts: plan.RolloutsDeny}, wantState: plan.RolloutAwaitingApproval, wantWait: true},
		{name: "allow: made", opts: plan.Options{Rollouts: plan.RolloutsAllow}, wantState: plan.RolloutAllowed},
		{name: "deny, id approved: made, the approval used", opts: plan.Options{Rollouts: plan.RolloutsDeny, Approved: []string{rolloutID}},
			wantState: plan.RolloutApproved, wantUsed: []plan.Approval{{ID: rolloutID, State: plan.ApprovalUsed}}},
		{name: "deny, another id approved: waits, the approval stale", opts: plan.Options{Rollouts: plan.RolloutsDeny, Approved: []string{"0000000000"}},
			wantState: plan.RolloutAwaitingApproval, wantWait: true, wantUsed: []plan.Approval{{ID: "0000000000", State: plan.ApprovalStale}}},
		{name: "allow, budget spent: waits for the budget", opts: plan.Options{Rollouts: plan.RolloutsAllow}, budgetSpent: true,
			wantState: plan.RolloutAwaitingBudget, wantWait: true},
		{name: "approved, budget spent: waits for the budget", opts: plan.Options{Rollouts: plan.RolloutsDeny, Approved: []string{rolloutID}}, budgetSpent: true,
			wantState: plan.RolloutAwaitingBudget, wantWait: true, wantUsed: []plan.Approval{{ID: rolloutID, State: plan.ApprovalWaiting}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			templates := []plan.TemplatePlan{rotating(dataID, "workers-data-0123456789"), rotating(workersID, rotatedTo)}
			m3mt := fromYAML(t, m3mtConsumer)
			d := decide(t, tc.opts, tc.budgetSpent, templates, md, m3mt)
			data, workers := d.Templates[0], d.Templates[1]
			g.Expect(data.Rollout).To(BeNil(), "repointing a Metal3MachineTemplate rolls nothing")
			g.Expect(data.Writes).To(Equal([]plan.Write{plan.WriteCreateReplacement, plan.WriteMarkSuperseded}), "and it is made")
			g.Expect(workers.Rollout).NotTo(BeNil())
			g.Expect(workers.Rollout.ID).To(Equal(rolloutID))
			g.Expect(workers.Rollout.State).To(Equal(tc.wantState))
			g.Expect(workers.Rollout.Consumers).To(Equal([]plan.RolledConsumer{{ID: manifest.IDOf(md), Machines: plan.MachineCount{N: 2, Known: true}}}))
			g.Expect(d.Approvals).To(Equal(tc.wantUsed))
			g.Expect(d.Consumers[1].Changes).To(ConsistOf(HaveField("After", "workers-data-0123456789")), "the Metal3MachineTemplate is repointed")
			if tc.wantWait {
				g.Expect(workers.Outcome).To(Equal(plan.OutcomeAwaitingRollout))
				g.Expect(workers.Writes).To(BeEmpty(), "no replacement, no mark")
				g.Expect(d.Consumers[0].Changes).To(BeEmpty(), "the MachineDeployment is not repointed")
				g.Expect(d.StartsRollouts()).To(BeFalse())
				plans := plan.Script(d, plan.ScriptInput{Release: consentRelease})
				for _, s := range plans.Steps {
					g.Expect(s.Object == nil || s.Object.GetName() != rotatedTo).To(BeTrue(), "no replacement")
					g.Expect(s.Log).NotTo(ContainSubstring("superseded by "+rotatedTo), "no mark")
					g.Expect(s.ID).NotTo(Equal(manifest.IDOf(md)), "no step for its consumer")
				}
				return
			}
			g.Expect(workers.Outcome).To(Equal(plan.OutcomeDrifted))
			g.Expect(workers.Writes).To(Equal([]plan.Write{plan.WriteCreateReplacement, plan.WriteMarkSuperseded}))
			g.Expect(d.StartsRollouts()).To(BeTrue())
			g.Expect(d.Consumers[0].Changes).To(ContainElements(HaveField("After", rotatedTo),
				And(HaveField("Path", "/metadata/annotations"), HaveField("After", map[string]any{api.RolloutsMadeAnnotation: rolloutID}))),
				"the repoint and the record of the rollout, in one patch")
		})
	}
}

// TestRolloutID: the id is the same on every pass while what the rollout
// writes is, and changes with any change of it: another replacement name
// (another chart), another consumer, a consumer with a rollout made on it
// since.
func TestRolloutID(t *testing.T) {
	g := NewWithT(t)
	md := md0(t, "")
	first := idNow(t, md)
	g.Expect(first).To(MatchRegexp("^[0-9a-f]{10}$"))
	g.Expect(idNow(t, md0(t, ""))).To(Equal(first), "stable across passes")
	scaled := md0(t, "")
	g.Expect(unstructured.SetNestedField(scaled.Object, int64(5), "spec", "replicas")).To(Succeed())
	g.Expect(idNow(t, scaled)).To(Equal(first), "a scaled MachineDeployment rolls the same way")

	d := decide(t, plan.Options{}, false, []plan.TemplatePlan{rotating(workersID, "workers-aaaaaaaaaa")}, md)
	g.Expect(d.Templates[0].Rollout.ID).NotTo(Equal(first), "another replacement: another id")
	other := fromYAML(t, strings.Replace(mdV1beta2, "name: md-0", "name: md-1", 1))
	d = decide(t, plan.Options{}, false, []plan.TemplatePlan{rotating(workersID, rotatedTo)}, md, other)
	g.Expect(d.Templates[0].Rollout.ID).NotTo(Equal(first), "another consumer: another id")
	g.Expect(d.Templates[0].Rollout.Consumers).To(HaveLen(2))
	setBack := md0(t, ", annotations: {"+api.RolloutsMadeAnnotation+": "+first+"}")
	g.Expect(idNow(t, setBack)).NotTo(Equal(first), "set back after the rollout was made: a new id")

	// A crash between the repoints of one rollout: md-0 moved and recorded
	// it, md-1 did not; the next pass finds the same id, and goes on.
	both := decide(t, plan.Options{}, false, []plan.TemplatePlan{rotating(workersID, rotatedTo)}, md, other).Templates[0].Rollout.ID
	moved := md0(t, ", annotations: {"+api.RolloutsMadeAnnotation+": "+both+"}")
	g.Expect(unstructured.SetNestedField(moved.Object, rotatedTo, "spec", "template", "spec", "infrastructureRef", "name")).To(Succeed())
	d = decide(t, plan.Options{Approved: []string{both}}, false, []plan.TemplatePlan{rotating(workersID, rotatedTo)}, moved, other)
	g.Expect(d.Templates[0].Rollout.ID).To(Equal(both), "half made: the same id")
	g.Expect(d.Templates[0].Rollout.State).To(Equal(plan.RolloutApproved))
}

// TestApprovalDone: once the approved rollout is made (the consumer
// references the replacement and records the id), nothing waits, the
// approval is reported done, and the id approves nothing again; a consumer
// set back since gets a new id, which waits.
func TestApprovalDone(t *testing.T) {
	g := NewWithT(t)
	first := idNow(t, md0(t, ""))
	made := md0(t, ", annotations: {"+api.RolloutsMadeAnnotation+": "+first+"}")
	g.Expect(unstructured.SetNestedField(made.Object, rotatedTo, "spec", "template", "spec", "infrastructureRef", "name")).To(Succeed())
	done := rotating(workersID, rotatedTo)
	done.Writes = []plan.Write{plan.WriteMarkSuperseded}
	opts := plan.Options{Rollouts: plan.RolloutsDeny, Approved: []string{first}}

	d := decide(t, opts, false, []plan.TemplatePlan{done}, made)
	g.Expect(d.Templates[0].Rollout).To(BeNil(), "the consumer is where it must be: no rollout")
	g.Expect(d.Templates[0].Writes).To(Equal([]plan.Write{plan.WriteMarkSuperseded}), "the rotation finishes (a crash after the repoint)")
	g.Expect(d.Approvals).To(Equal([]plan.Approval{{ID: first, State: plan.ApprovalDone}}))

	setBack := md0(t, ", annotations: {"+api.RolloutsMadeAnnotation+": "+first+"}")
	d = decide(t, opts, false, []plan.TemplatePlan{rotating(workersID, rotatedTo)}, setBack)
	g.Expect(d.Templates[0].Outcome).To(Equal(plan.OutcomeAwaitingRollout), "the old approval does not roll it again")
	g.Expect(d.Templates[0].Rollout.ID).NotTo(Equal(first))
	g.Expect(d.Approvals).To(Equal([]plan.Approval{{ID: first, State: plan.ApprovalDone}}))

	second := d.Templates[0].Rollout.ID
	opts.Approved = []string{first, second}
	d = decide(t, opts, false, []plan.TemplatePlan{rotating(workersID, rotatedTo)}, setBack)
	g.Expect(d.Templates[0].Rollout.State).To(Equal(plan.RolloutApproved), "several ids: each approves its own")
	g.Expect(d.Consumers[0].Changes).To(ContainElement(HaveField("After", second+","+first)), "newest first")
}

// TestRolloutWayBack: consumers moving back from a replacement to an
// original that matches the manifest again roll Machines too: under deny
// they stay, and the original keeps its mark.
func TestRolloutWayBack(t *testing.T) {
	g := NewWithT(t)
	onReplacement := md0(t, "")
	g.Expect(unstructured.SetNestedField(onReplacement.Object, rotatedTo, "spec", "template", "spec", "infrastructureRef", "name")).To(Succeed())
	marked := fromYAML(t, "apiVersion: infrastructure.cluster.x-k8s.io/v1beta1\nkind: Metal3MachineTemplate\n"+
		"metadata: {name: workers, namespace: fleet, annotations: {"+api.SupersededByAnnotation+": "+rotatedTo+"}}\n")
	inSync := plan.TemplatePlan{ID: workersID, Outcome: plan.OutcomeInSync, Live: marked}
	replaces := map[manifest.ID]manifest.ID{id(manifest.Metal3MachineTemplateKind, "fleet", rotatedTo): workersID}
	d, err := plan.DecideRelease(plan.ReleaseInput{Options: plan.Options{Mode: plan.ModeEnabled}, Act: true, Release: consentRelease,
		Templates: []plan.TemplatePlan{inSync}, Consumers: []*unstructured.Unstructured{onReplacement}, Replaces: replaces, Users: plan.Users{}})
	g.Expect(err).NotTo(HaveOccurred())
	w := d.Templates[0]
	g.Expect(w.Outcome).To(Equal(plan.OutcomeAwaitingRollout))
	g.Expect(w.Rollout.Back(workersID)).To(BeTrue())
	g.Expect(w.Writes).To(BeEmpty(), "the mark stays until the consumers move back")
	g.Expect(d.Consumers[0].Changes).To(BeEmpty())
	line, _ := plan.Describe(w, true)
	g.Expect(line).To(HavePrefix("waits for approval of rollout " + w.Rollout.ID + ": matches the manifest again; would repoint consumers back to it"))
}

// TestCountMachines: replicas wanted or had, whichever is larger; unknown,
// never 0, for an object without either.
func TestCountMachines(t *testing.T) {
	g := NewWithT(t)
	g.Expect(plan.CountMachines(md0(t, ""))).To(Equal(plan.MachineCount{N: 2, Known: true}))
	scalingDown := md0(t, "")
	g.Expect(unstructured.SetNestedField(scalingDown.Object, int64(1), "spec", "replicas")).To(Succeed())
	g.Expect(plan.CountMachines(scalingDown).N).To(BeEquivalentTo(2), "the Machines it still has roll too")
	unknown := plan.CountMachines(fromYAML(t, mdV1beta2))
	g.Expect(unknown.Known).To(BeFalse())
	g.Expect(unknown.String()).To(Equal("an unknown number of Machines"))
	g.Expect(plan.MachineCount{N: 1, Known: true}.String()).To(Equal("1 Machine"))
}

// TestRollingOut: the fields Cluster API derives its RollingOut condition
// from, at v1beta2 and v1beta1, and a release counts only a consumer the add-on
// rolled.
func TestRollingOut(t *testing.T) {
	cases := []struct {
		name   string
		status string
		gen    int64
		want   bool
	}{
		{name: "settled", status: `{observedGeneration: 3, replicas: 2, upToDateReplicas: 2}`, gen: 3},
		{name: "an old Machine left after a surge", status: `{observedGeneration: 3, replicas: 3, upToDateReplicas: 2}`, gen: 3, want: true},
		{name: "fewer up to date than wanted", status: `{observedGeneration: 3, upToDateReplicas: 1}`, gen: 3, want: true},
		{name: "generation not observed yet", status: `{observedGeneration: 2, upToDateReplicas: 2}`, gen: 3, want: true},
		{name: "v1beta1: the v1beta2 status", status: `{observedGeneration: 3, v1beta2: {upToDateReplicas: 0}}`, gen: 3, want: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			y := mdV1beta2
			if strings.HasPrefix(tc.name, "v1beta1") {
				y = mdV1beta1
			}
			// Decoded as the API server's objects are: integers as int64.
			j, err := yaml.YAMLToJSON([]byte(y + "status: " + tc.status + "\n"))
			g.Expect(err).NotTo(HaveOccurred())
			o := &unstructured.Unstructured{}
			g.Expect(o.UnmarshalJSON(j)).To(Succeed())
			o.SetGeneration(tc.gen)
			g.Expect(unstructured.SetNestedField(o.Object, int64(2), "spec", "replicas")).To(Succeed())
			g.Expect(plan.RollingOut(o)).To(Equal(tc.want))
			g.Expect(plan.ReleaseRollingOut([]*unstructured.Unstructured{o})).To(BeFalse(), "not a rollout the add-on made")
			o.SetAnnotations(map[string]string{api.RolloutsMadeAnnotation: "0123456789"})
			g.Expect(plan.ReleaseRollingOut([]*unstructured.Unstructured{o})).To(Equal(tc.want))
		})
	}
}
