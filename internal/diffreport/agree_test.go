package diffreport

import (
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/diff"
	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/pipeline"
	"github.com/templatedrift/template-drift-controller/internal/plan"
	"github.com/templatedrift/template-drift-controller/internal/report"
)

// TestDiffAgreesWithTheCondition: for the same read-only result, the diff
// command and the TemplatesInSync condition give the same answer to "is
// the release in sync", whatever the templates' outcomes, the consumers
// and the verdict.
func TestDiffAgreesWithTheCondition(t *testing.T) {
	const replacement = "workers-5f1c2a9b0d"
	rotated := func(tp *plan.TemplatePlan) {
		tp.Strategy, tp.Rotation = plan.StrategyRotate, &plan.Rotation{To: replacement}
	}
	held := func(tp *plan.TemplatePlan) {
		rotated(tp)
		tp.Rotation.HeldBy = []manifest.ID{{GroupKind: manifest.KubeadmControlPlaneKind, Namespace: "fleet", Name: "cp-other"}}
	}
	md := manifest.ID{GroupKind: manifest.MachineDeploymentKind, Namespace: "fleet", Name: "md-0"}
	repoint := plan.ConsumerPlan{ID: md, Changes: []diff.Change{{Path: "/spec/template/spec/infrastructureRef/name", Op: diff.OpReplace,
		Before: "workers", After: replacement}}}
	with := func(r *pipeline.Result, change func(r *pipeline.Result)) *pipeline.Result { change(r); return r }

	type tc struct {
		res *pipeline.Result
		// want is whether the release is in sync.
		want bool
	}
	cases := map[string]tc{
		"in sync":                       {result(tmpl("workers", plan.OutcomeInSync, nil)), true},
		"corrected earlier":             {result(tmpl("workers", plan.OutcomeCorrected, rotated)), true},
		"superseded earlier":            {result(tmpl("workers", plan.OutcomeSuperseded, rotated)), true},
		"skipped":                       {result(tmpl("workers", plan.OutcomeSkipped, nil)), true},
		"no templates":                  {result(), true},
		"drifted, would rotate":         {result(tmpl("workers", plan.OutcomeDrifted, rotated)), false},
		"drifted, would patch":          {result(tmpl("workers", plan.OutcomeDrifted, func(tp *plan.TemplatePlan) { tp.Strategy = plan.StrategyInPlace })), false},
		"missing":                       {result(tmpl("workers", plan.OutcomeMissing, nil)), false},
		"being deleted":                 {result(tmpl("workers", plan.OutcomeWaiting, nil)), false},
		"failed":                        {result(tmpl("workers", plan.OutcomeFailed, nil)), false},
		"blocked":                       {result(tmpl("workers", plan.OutcomeBlocked, nil)), false},
		"held":                          {result(tmpl("workers", plan.OutcomeHeld, held)), false},
		"superseded, but held":          {result(tmpl("workers", plan.OutcomeSuperseded, held)), false},
		"owned by another release":      {result(tmpl("workers", plan.OutcomeConflict, nil)), false},
		"restored, consumers move back": {result(tmpl("workers", plan.OutcomeInSync, func(tp *plan.TemplatePlan) { tp.Restored = true })), false},
		"rotation done, consumers behind": {with(result(tmpl("workers", plan.OutcomeSuperseded, func(tp *plan.TemplatePlan) {
			rotated(tp)
			tp.Rotation.ConsumersBehind = true
		})), func(r *pipeline.Result) { r.Consumers = []plan.ConsumerPlan{repoint} }), false},
		"a consumer to repoint alone": {with(result(tmpl("workers", plan.OutcomeInSync, nil)),
			func(r *pipeline.Result) { r.Consumers = []plan.ConsumerPlan{repoint} }), false},
		"a consumer another release owns": {with(result(tmpl("workers", plan.OutcomeInSync, nil)),
			func(r *pipeline.Result) { r.Conflicts = []plan.Conflict{{ID: md, Owner: "fleet/other"}} }), false},
		"a gate stopped the pass": {with(result(), func(r *pipeline.Result) {
			r.Verdict = &plan.Verdict{Status: metav1.ConditionUnknown, Reason: api.ReleaseInProgressReason, Message: "Helm is upgrading"}
		}), false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			res := tc.res
			s := report.Summarize(res)
			g.Expect(s.Condition).NotTo(BeNil())
			d := NewDiffReport("fleet/cluster-a", res)
			g.Expect(s.Condition.Status == metav1.ConditionTrue).To(Equal(tc.want), "the condition: %s %s: %s", s.Condition.Status, s.Condition.Reason, s.Condition.Message)
			g.Expect(d.InSync).To(Equal(tc.want), "the diff")
		})
	}
}
