package diffreport

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/diff"
	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/pipeline"
	"github.com/templatedrift/template-drift-controller/internal/plan"
	"github.com/templatedrift/template-drift-controller/internal/release"
)

const replacement = "workers-5f1c2a9b0d"

var imageURL = diff.Change{Path: "/spec/template/spec/image/url", Op: diff.OpReplace, Before: "http://10.0.0.1/img", After: "http://10.0.0.2/img"}

// tmpl builds the plan of the Metal3MachineTemplate fleet/name with
// outcome o; mutate adjusts it.
func tmpl(name string, o plan.Outcome, mutate func(t *plan.TemplatePlan)) plan.TemplatePlan {
	t := plan.TemplatePlan{ID: manifest.ID{GroupKind: manifest.Metal3MachineTemplateKind, Namespace: "fleet", Name: name}, Outcome: o}
	if mutate != nil {
		mutate(&t)
	}
	return t
}

// result is a read-only pass (the diff command's) over release
// fleet/cluster-a.v3 with the given templates.
func result(templates ...plan.TemplatePlan) *pipeline.Result {
	return &pipeline.Result{
		Decisions: plan.Decisions{Options: plan.Options{Mode: plan.ModeWarn, Strategy: plan.StrategyAuto}, Templates: templates},
		Release:   &release.Release{Name: "cluster-a", Namespace: "fleet", Version: 3, Status: "deployed"},
	}
}

// Mutations for tmpl.
func drifted(t *plan.TemplatePlan) { t.Changes = []diff.Change{imageURL} }
func inPlace(t *plan.TemplatePlan) { drifted(t); t.Strategy = plan.StrategyInPlace }
func rotated(t *plan.TemplatePlan) {
	drifted(t)
	t.Strategy, t.Rotation, t.RollsMachines = plan.StrategyRotate, &plan.Rotation{To: replacement}, true
}

func TestDiffReport(t *testing.T) {
	const header = "TEMPLATE  FIELD  BEFORE  AFTER  STRATEGY  ROLLS MACHINES"
	imageLine := `/spec/template/spec/image/url: "http://10.0.0.1/img" → "http://10.0.0.2/img"`
	consumer := plan.ConsumerPlan{
		ID: manifest.ID{GroupKind: manifest.MachineDeploymentKind, Namespace: "fleet", Name: "md-0"},
		Changes: []diff.Change{{Path: "/spec/template/spec/infrastructureRef/name", Op: diff.OpReplace,
			Before: "workers", After: replacement}},
	}
	cases := []struct {
		name string           // what the case shows
		res  *pipeline.Result // the pass
		code int              // exit code
		// text is the whole text output, when set; textContains are
		// substrings of it.
		text         string
		textContains []string
		// tableRows are substrings of the table's rows after the header
		// (spaces folded), one per row, in order; none means the header only.
		tableRows []string
	}{{
		name: "drift in place, one template in sync",
		res:  result(tmpl("workers", plan.OutcomeDrifted, inPlace), tmpl("cp", plan.OutcomeInSync, nil)),
		code: ExitDrift,
		text: "HelmRelease fleet/cluster-a (release fleet/cluster-a.v3)\n" +
			"  Metal3MachineTemplate/workers: would in-place, rolls machines: no\n" +
			"      " + imageLine + "\n" +
			"  Metal3MachineTemplate/cp: in sync\n" +
			"1 of 2 templates drifted\n",
		tableRows: []string{`Metal3MachineTemplate/workers  /spec/template/spec/image/url  "http://10.0.0.1/img"  "http://10.0.0.2/img"  in-place  no`},
	}, {
		name: "drift by rotation: strategy and replacement, rolls machines, the consumer repointed",
		res: func() *pipeline.Result {
			r := result(tmpl("workers", plan.OutcomeDrifted, rotated))
			r.Consumers = []plan.ConsumerPlan{consumer, {ID: manifest.ID{GroupKind: manifest.KubeadmControlPlaneKind, Namespace: "fleet", Name: "cp"}}}
			return r
		}(),
		code: ExitDrift,
		textContains: []string{
			"  Metal3MachineTemplate/workers: would rotate to " + replacement + ", rolls machines: yes\n",
			`  MachineDeployment/md-0: would repoint /spec/template/spec/infrastructureRef/name: "workers" → "` + replacement + `"` + "\n",
			"1 of 1 templates drifted\n",
		},
		tableRows: []string{"rotate → " + replacement + "  yes"},
	}, {
		name: "a consumer to repoint alone is drift",
		res: func() *pipeline.Result {
			r := result(tmpl("workers", plan.OutcomeInSync, nil))
			r.Consumers = []plan.ConsumerPlan{consumer}
			return r
		}(),
		code:         ExitDrift,
		textContains: []string{"MachineDeployment/md-0: would repoint", "0 of 1 templates drifted"},
	}, {
		name: "all in sync; skipped and in-place-corrected templates do not count",
		res: result(tmpl("workers", plan.OutcomeInSync, nil),
			tmpl("opted", plan.OutcomeSkipped, func(t *plan.TemplatePlan) { t.Message = "opted out" }),
			tmpl("fixed", plan.OutcomeCorrected, func(t *plan.TemplatePlan) { t.Strategy = plan.StrategyInPlace })),
		code: ExitInSync,
		text: "HelmRelease fleet/cluster-a (release fleet/cluster-a.v3)\n" +
			"  Metal3MachineTemplate/workers: in sync\n" +
			"  Metal3MachineTemplate/opted: skipped (opted out)\n" +
			"  Metal3MachineTemplate/fixed: in sync\n" +
			"0 of 3 templates drifted\n",
	}, {
		name: "superseded by an earlier release's rotation: in sync through its replacement, its old drift not in the table",
		res:  result(tmpl("workers", plan.OutcomeSuperseded, rotated)),
		code: ExitInSync,
		textContains: []string{
			"  Metal3MachineTemplate/workers: in sync through its replacement " + replacement + " (rotated earlier)\n",
			"0 of 1 templates drifted\n",
		},
	}, {
		name: "corrected by a rotation for this release: in sync through its replacement",
		res:  result(tmpl("workers", plan.OutcomeCorrected, rotated)),
		code: ExitInSync,
		textContains: []string{
			"  Metal3MachineTemplate/workers: in sync through its replacement " + replacement + " (rotated earlier)\n",
			"0 of 1 templates drifted\n",
		},
	}, {
		name: "failed: cannot be corrected, with the reason; its fields in the table",
		res: result(tmpl("workers", plan.OutcomeFailed, func(t *plan.TemplatePlan) {
			drifted(t)
			t.Message = "in-place correction refused: field is immutable"
		})),
		code: ExitDrift,
		textContains: []string{
			"  Metal3MachineTemplate/workers: in-place correction refused: field is immutable\n",
			"      " + imageLine + "\n",
		},
		tableRows: []string{"Metal3MachineTemplate/workers  /spec/template/spec/image/url"},
	}, {
		name:         "missing: would be recreated; no field to list",
		res:          result(tmpl("workers", plan.OutcomeMissing, func(t *plan.TemplatePlan) { t.Strategy = plan.StrategyRecreate })),
		code:         ExitDrift,
		textContains: []string{"  Metal3MachineTemplate/workers: missing, would recreate from the manifest, rolls machines: no\n"},
	}, {
		name:         "waiting: being deleted",
		res:          result(tmpl("workers", plan.OutcomeWaiting, nil)),
		code:         ExitDrift,
		textContains: []string{"  Metal3MachineTemplate/workers: waiting for deletion to finish\n", "1 of 1 templates drifted\n"},
	}, {
		name: "an added field reads <absent> before",
		res: result(tmpl("workers", plan.OutcomeDrifted, func(t *plan.TemplatePlan) {
			t.Strategy = plan.StrategyInPlace
			t.Changes = []diff.Change{{Path: "/spec/template/spec/online", Op: diff.OpAdd, After: true}}
		})),
		code:         ExitDrift,
		textContains: []string{"      /spec/template/spec/online: <absent> → true\n"},
		tableRows:    []string{"/spec/template/spec/online  <absent>  true  in-place  no"},
	}, {
		name: "gate stopped the pass",
		res: func() *pipeline.Result {
			r := result()
			r.Verdict = &plan.Verdict{Status: metav1.ConditionUnknown, Reason: api.ReleaseUnavailableReason, Message: "no release"}
			return r
		}(),
		code: ExitError,
		text: "HelmRelease fleet/cluster-a (release fleet/cluster-a.v3)\ncannot diff: ReleaseUnavailable: no release\n",
	}, {
		name: "Helm in flight stops the diff",
		res: func() *pipeline.Result {
			r := result()
			r.Verdict = &plan.Verdict{Status: metav1.ConditionUnknown, Reason: api.ReleaseInProgressReason,
				Message: "waiting: Helm is acting on the release: v4 is pending-upgrade in storage"}
			return r
		}(),
		code: ExitError,
		text: "HelmRelease fleet/cluster-a (release fleet/cluster-a.v3)\ncannot diff: ReleaseInProgress: waiting: Helm is acting on the release: v4 is pending-upgrade in storage\n",
	}, {
		name: "a missing Cluster stops the diff",
		res: func() *pipeline.Result {
			r := result()
			r.Verdict = &plan.Verdict{Status: metav1.ConditionUnknown, Reason: api.ClusterUnavailableReason, Message: "waiting: Cluster fleet/mgmt does not exist"}
			return r
		}(),
		code: ExitError,
		text: "HelmRelease fleet/cluster-a (release fleet/cluster-a.v3)\ncannot diff: ClusterUnavailable: waiting: Cluster fleet/mgmt does not exist\n",
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			d := NewDiffReport("fleet/cluster-a", tc.res)
			g.Expect(d.ExitCode()).To(Equal(tc.code))
			g.Expect(d.InSync).To(Equal(tc.code == ExitInSync))

			var text, table bytes.Buffer
			g.Expect(d.WriteText(&text)).To(Succeed())
			if tc.text != "" {
				g.Expect(text.String()).To(Equal(tc.text))
			}
			for _, s := range tc.textContains {
				g.Expect(text.String()).To(ContainSubstring(s))
			}

			g.Expect(d.WriteTable(&table)).To(Succeed())
			lines := strings.Split(strings.TrimSuffix(table.String(), "\n"), "\n")
			g.Expect(strings.Join(strings.Fields(lines[0]), " ")).To(Equal(strings.Join(strings.Fields(header), " ")))
			rows := lines[1:]
			g.Expect(rows).To(HaveLen(len(tc.tableRows)))
			// Columns are padded; compare with runs of spaces folded.
			fold := func(s string) string { return strings.Join(strings.Fields(s), " ") }
			for i, want := range tc.tableRows {
				g.Expect(fold(rows[i])).To(ContainSubstring(fold(want)))
			}

			var js bytes.Buffer
			g.Expect(d.WriteJSON(&js)).To(Succeed())
			var back DiffReport
			g.Expect(json.Unmarshal(js.Bytes(), &back)).To(Succeed())
			g.Expect(back.InSync).To(Equal(d.InSync))
			g.Expect(back.Reason).To(Equal(d.Reason))
			g.Expect(back.Templates).To(HaveLen(len(d.Templates)))
		})
	}
}

// TestDiffReportJSON pins the JSON field names scripts read.
func TestDiffReportJSON(t *testing.T) {
	g := NewWithT(t)
	res := result(
		tmpl("workers", plan.OutcomeDrifted, rotated),
		tmpl("opted", plan.OutcomeSkipped, func(t *plan.TemplatePlan) { t.Message = "opted out" }),
		tmpl("broken", plan.OutcomeFailed, func(t *plan.TemplatePlan) { t.Message = "refused" }),
	)
	res.Consumers = []plan.ConsumerPlan{{
		ID:      manifest.ID{GroupKind: manifest.MachineDeploymentKind, Namespace: "fleet", Name: "md-0"},
		Changes: []diff.Change{{Path: "/spec/template/spec/infrastructureRef/name", Op: diff.OpReplace, Before: "workers", After: replacement}},
	}}
	var js bytes.Buffer
	g.Expect(NewDiffReport("fleet/cluster-a", res).WriteJSON(&js)).To(Succeed())
	g.Expect(js.String()).To(ContainSubstring("\n  \"helmRelease\""), "indented")
	g.Expect(js.String()).To(ContainSubstring(`"http://10.0.0.1/img"`))

	var m map[string]any
	g.Expect(json.Unmarshal(js.Bytes(), &m)).To(Succeed())
	g.Expect(m).To(HaveLen(5), "reason and message are omitted when empty")
	g.Expect(m).To(HaveKeyWithValue("helmRelease", "fleet/cluster-a"))
	g.Expect(m).To(HaveKeyWithValue("release", "fleet/cluster-a.v3"))
	g.Expect(m).To(HaveKeyWithValue("inSync", false))
	g.Expect(m).To(HaveKey("templates"))
	g.Expect(m).To(HaveKey("consumers"))

	templates := m["templates"].([]any)
	g.Expect(templates).To(HaveLen(3))
	g.Expect(templates[0]).To(Equal(map[string]any{
		"kind": "Metal3MachineTemplate", "name": "workers", "state": "Drifted", "strategy": "rotate",
		"replacement": replacement, "rollsMachines": true, "action": "would rotate to " + replacement + ", rolls machines: yes",
		"changes": []any{map[string]any{"path": "/spec/template/spec/image/url", "op": "replace",
			"before": "http://10.0.0.1/img", "after": "http://10.0.0.2/img"}},
	}))
	g.Expect(templates[1]).To(Equal(map[string]any{
		"kind": "Metal3MachineTemplate", "name": "opted", "state": "Skipped", "rollsMachines": false, "skipped": "opted out",
	}))
	g.Expect(templates[2]).To(Equal(map[string]any{
		"kind": "Metal3MachineTemplate", "name": "broken", "state": "Failed", "rollsMachines": false, "failed": "refused", "action": "refused",
	}))
	g.Expect(m["consumers"]).To(Equal([]any{map[string]any{
		"kind": "MachineDeployment", "name": "md-0",
		"changes": []any{map[string]any{"path": "/spec/template/spec/infrastructureRef/name", "op": "replace",
			"before": "workers", "after": replacement}},
	}}))

	// A stopped pass: reason and message, an empty list of templates (never null).
	stopped := result()
	stopped.Release = nil
	stopped.Verdict = &plan.Verdict{Status: metav1.ConditionFalse, Reason: api.InvalidConfigurationReason, Message: "bad"}
	js.Reset()
	g.Expect(NewDiffReport("fleet/cluster-a", stopped).WriteJSON(&js)).To(Succeed())
	m = nil
	g.Expect(json.Unmarshal(js.Bytes(), &m)).To(Succeed())
	g.Expect(m).To(Equal(map[string]any{
		"helmRelease": "fleet/cluster-a", "inSync": false, "reason": api.InvalidConfigurationReason, "message": "bad", "templates": []any{},
	}))
}

// TestDiffReportConflict: a template and a consumer of another Helm release
// are listed with their owner, never as drift to correct, and the report is
// not in sync.
func TestDiffReportConflict(t *testing.T) {
	g := NewWithT(t)
	res := result(tmpl("workers", plan.OutcomeInSync, nil), tmpl("stolen", plan.OutcomeConflict, func(t *plan.TemplatePlan) { t.Message = "owned by release fleet/victim" }))
	res.Conflicts = []plan.Conflict{{ID: manifest.ID{GroupKind: manifest.MachineDeploymentKind, Namespace: "fleet", Name: "md0"}, Owner: "fleet/victim"}}
	d := NewDiffReport("fleet/cluster-a", res)
	g.Expect(d.InSync).To(BeFalse())
	g.Expect(d.ExitCode()).To(Equal(ExitDrift))
	g.Expect(d.Templates[1]).To(And(HaveField("State", "Conflict"), HaveField("Conflict", "owned by release fleet/victim")))
	g.Expect(d.Consumers).To(ConsistOf(And(HaveField("Kind", "MachineDeployment"), HaveField("Conflict", "owned by release fleet/victim"), HaveField("Changes", BeEmpty()))))
	var b bytes.Buffer
	g.Expect(d.WriteText(&b)).To(Succeed())
	g.Expect(b.String()).To(ContainSubstring("Metal3MachineTemplate/stolen: not this release's, left untouched (owned by release fleet/victim)"))
	g.Expect(b.String()).To(ContainSubstring("MachineDeployment/md0: not this release's, left untouched (owned by release fleet/victim)"))
	g.Expect(b.String()).To(ContainSubstring("0 of 2 templates drifted"))
}

// TestDiffReportRolloutJSON: a correction that waits for an approval
// carries its rollout: the id to approve, its state, and each consumer
// with its Machines, null when the count is not known (never 0).
func TestDiffReportRolloutJSON(t *testing.T) {
	g := NewWithT(t)
	md := manifest.ID{GroupKind: manifest.MachineDeploymentKind, Namespace: "fleet", Name: "md-0"}
	cp := manifest.ID{GroupKind: manifest.KubeadmControlPlaneKind, Namespace: "fleet", Name: "cp"}
	waiting := func(t *plan.TemplatePlan) {
		rotated(t)
		t.Rollout = &plan.MachineRollout{ID: "0123456789", To: replacement, State: plan.RolloutAwaitingApproval, Was: plan.OutcomeDrifted,
			Consumers: []plan.RolledConsumer{{ID: md, Machines: plan.MachineCount{N: 2, Known: true}}, {ID: cp}}}
	}
	var js bytes.Buffer
	g.Expect(NewDiffReport("fleet/cluster-a", result(tmpl("workers", plan.OutcomeAwaitingRollout, waiting))).WriteJSON(&js)).To(Succeed())
	var m struct {
		InSync    bool             `json:"inSync"`
		Templates []map[string]any `json:"templates"`
	}
	g.Expect(json.Unmarshal(js.Bytes(), &m)).To(Succeed())
	g.Expect(m.InSync).To(BeFalse())
	g.Expect(m.Templates[0]).To(HaveKeyWithValue("state", "AwaitingRollout"))
	g.Expect(m.Templates[0]).To(HaveKeyWithValue("action", HavePrefix("waits for approval of rollout 0123456789: would rotate to "+replacement)))
	g.Expect(m.Templates[0]).To(HaveKeyWithValue("rollout", map[string]any{
		"id": "0123456789", "state": "AwaitingApproval", "consumers": []any{
			map[string]any{"kind": "MachineDeployment", "name": "md-0", "machines": float64(2)},
			map[string]any{"kind": "KubeadmControlPlane", "name": "cp", "machines": nil},
		},
	}))
}
