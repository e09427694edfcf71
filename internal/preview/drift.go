package preview

import (
	"context"
	"fmt"

	helmv1 "helm.sh/helm/v4/pkg/release/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"

	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/pipeline"
	"github.com/templatedrift/template-drift-controller/internal/plan"
	"github.com/templatedrift/template-drift-controller/internal/release"
	"github.com/templatedrift/template-drift-controller/internal/target"
)

// Drift is, for a template, what the add-on sees of it now and after the
// upgrade, and what its next pass then does.
type Drift struct {
	// Today is the outcome of a read-only pass now (InSync, Drifted,
	// Blocked, …: the TemplatePlan outcomes), or TodayAbsent for a
	// template the upgrade creates.
	Today string `json:"today"`
	// After is the outcome of a read-only pass over the world the upgrade
	// leaves; empty when the upgrade fails, or when that pass would not
	// look at the templates.
	After string `json:"after,omitempty"`
	// Fate is what the upgrade does to the drift: none, healed, stays,
	// appears or failsUpgrade.
	Fate string `json:"fate"`
	// Addon is what the add-on's next pass does with the template, in the
	// diff command's words, when it differs then: after the upgrade, or now
	// when the upgrade fails.
	Addon string `json:"addon,omitempty"`
}

// TodayAbsent is Drift.Today for a template the upgrade creates: the
// add-on's pass now has nothing to look at.
const TodayAbsent = "Absent"

// foresee asks the pipeline, read-only, what the add-on makes of each
// template of rep, both passes reading the world from snap: a pass now, and, when the upgrade passes, a pass over
// the world it leaves (the release next, the objects after as the server
// would store them; pipeline.Foresee). The preview decides nothing of its
// own here: the outcomes and actions are the passes', and what the
// upgrade does to the drift is plan.FateOfDrift.
func (req Request) foresee(ctx context.Context, rep *Report, next *helmv1.Release, after map[manifest.ID]*unstructured.Unstructured,
	snap *target.Snapshot) error {
	cs, err := kubernetes.NewForConfig(req.TargetConfig)
	if err != nil {
		return fmt.Errorf("failed to reach the target cluster: %w", err)
	}
	target := &target.Target{Client: req.Target, Reader: snap, Secrets: cs.CoreV1(), Key: "preview"}
	engine := &pipeline.Engine{Kinds: req.Kinds, Releases: release.NewReader(manifest.DefaultMaxManifestBytes),
		MaxManifestBytes: manifest.DefaultMaxManifestBytes, Rollouts: req.Rollouts}
	hr := req.HelmRelease
	rep.AddonMode = string(plan.StartPass(hr.GetAnnotations(), hr.Spec.Suspend, false, req.Rollouts).Options.Mode)
	today, err := engine.Run(ctx, pipeline.Request{HelmRelease: hr, Target: target, ReadOnly: true})
	if err != nil {
		return fmt.Errorf("the add-on's read-only pass now: %w", err)
	}
	fails := rep.Fails()
	acting := today
	later := &pipeline.Result{}
	if !fails {
		if later, err = engine.Foresee(ctx, hr, target, pipeline.Upgraded{Release: next, Objects: after}); err != nil {
			return fmt.Errorf("the add-on's read-only pass after the upgrade: %w", err)
		}
		acting = later
	}
	if v := acting.Verdict; v != nil {
		rep.Addon = v.Reason + ": " + v.Message
	}
	if plan.HelmInFlight(today.Verdict) {
		// Helm is acting on the release: the add-on waits for it, and
		// the upgrade starts from a release that is not settled. Say so;
		// predict nothing of the templates' drift.
		rep.Addon = today.Verdict.Reason + ": " + today.Verdict.Message
		return nil
	}
	now, then := plansByID(today), plansByID(later)
	for i := range rep.Objects {
		o := &rep.Objects[i]
		tp, inNow := now[o.id]
		lp, inThen := then[o.id]
		// A template the pass now does not see is one the upgrade creates;
		// any other stops the pass before it looks (addon says why).
		if !o.template || o.Change == ChangeDelete || (!inNow && (!inThen || o.Change != ChangeCreate)) {
			continue
		}
		d := &Drift{Today: string(tp.Outcome), Fate: string(plan.FateOfDrift(tp.Outcome, lp.Outcome, o.Change == ChangeRefused, fails))}
		if !inNow {
			d.Today = TodayAbsent
		}
		act := tp
		if !fails {
			act = lp
			if inThen {
				d.After = string(lp.Outcome)
			}
		}
		if act.Outcome.Differs() {
			d.Addon, _ = plan.Describe(act, false)
		}
		o.Drift = d
	}
	return nil
}

func plansByID(res *pipeline.Result) map[manifest.ID]plan.TemplatePlan {
	out := map[manifest.ID]plan.TemplatePlan{}
	for _, t := range res.Templates {
		out[t.ID] = t
	}
	return out
}
