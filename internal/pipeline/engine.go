package pipeline

import (
	"context"
	"fmt"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/templatedrift/template-drift-controller/internal/apply"
	"github.com/templatedrift/template-drift-controller/internal/diff"
	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/plan"
	"github.com/templatedrift/template-drift-controller/internal/release"
	"github.com/templatedrift/template-drift-controller/internal/target"
)

// TargetResolver returns the cluster and identity a HelmRelease deploys to
// (an *target.Targets in production).
type TargetResolver interface {
	For(ctx context.Context, hr *helmv2.HelmRelease) (*target.Target, error)
}

// forgetter is a TargetResolver that keeps clients for HelmReleases.
type forgetter interface {
	Forget(hr types.NamespacedName)
}

// Forget lets go of what the engine keeps for a HelmRelease that is gone or
// being deleted: its target's client, if no other HelmRelease uses it.
func (e *Engine) Forget(hr types.NamespacedName) {
	if f, ok := e.Targets.(forgetter); ok {
		f.Forget(hr)
	}
	e.Budget.Forget(hr)
}

// Engine runs the pipeline for one HelmRelease. It is shared by the
// controller, the read-only diff command and the demo.
type Engine struct {
	// Kinds selects the template kinds.
	Kinds *manifest.KindMatcher
	// Releases reads stored releases, memoized.
	Releases *release.Reader
	// Targets resolves a HelmRelease's target; a Request may bring its own.
	Targets TargetResolver
	// MaxManifestBytes bounds the manifest parsed.
	MaxManifestBytes int
	// DeleteWait bounds how long a recreate waits for its delete.
	DeleteWait time.Duration
	// Rollouts is the rollout policy of a release that sets none ("" is
	// deny); Budget bounds the releases rolling out at once (nil: no
	// limit).
	Rollouts plan.RolloutPolicy
	Budget   *RolloutBudget
}

// Request is one pass.
type Request struct {
	HelmRelease *helmv2.HelmRelease
	// Target, when set, is used instead of Engine.Targets.
	Target *target.Target
	// ReadOnly forbids writes, whatever the mode, and looks at releases
	// that did not opt in or are suspended (the diff command).
	ReadOnly bool
}

// Result is what a pass decided and did, for the reporters.
type Result struct {
	plan.Decisions
	// HelmRelease names the HelmRelease of the pass.
	HelmRelease types.NamespacedName
	// Release is the stored release the pass worked from.
	Release *release.Release
	// Writes counts the writes made.
	Writes int
	// Err is the first failed write; the writes after it were not made.
	Err error
	// Pruned are the unused replacements deleted by the clean-up (not
	// counted in Writes: they correct nothing).
	Pruned []manifest.ID
}

// Run performs one pass: gather, decide, act. Errors that are the
// release's or the user's fault come back as a Verdict (a gate, or an
// error that is the release's or the user's, ends the pass with one); an
// error return means the pass could not run and should be retried with
// back-off.
func (e *Engine) Run(ctx context.Context, req Request) (*Result, error) {
	hr := req.HelmRelease
	start := plan.StartPass(hr.GetAnnotations(), hr.Spec.Suspend, req.ReadOnly, e.Rollouts)
	res := newResult(start)
	res.HelmRelease = types.NamespacedName{Namespace: hr.Namespace, Name: hr.Name}
	if v, stop := plan.Evaluate(start.Facts, plan.ObjectGates); stop {
		res.Verdict = &v
		return res, nil
	}
	tg, err := e.target(ctx, req)
	if err != nil {
		return verdictOrFail(res, err)
	}
	p, err := e.plan(ctx, hr, tg, res, start.Facts)
	if err != nil || res.Verdict != nil {
		return verdictOrFail(res, err)
	}
	if res.Act {
		e.act(ctx, p, res)
	}
	return res, nil
}

// act makes the pass's steps (plan.Script: the move blocks, the
// corrections, the clean-up), then lifts the move blocks plan.Lifts says
// to lift given what the steps made. A lift that fails fails the pass, so
// it runs again.
func (e *Engine) act(ctx context.Context, p *pass, res *Result) {
	script := plan.Script(res.Decisions, plan.ScriptInput{Release: p.planRelease(), Clusters: p.clusters, Owners: p.owners})
	done := apply.Run(ctx, p.target.Client, script.Steps, e.DeleteWait)
	res.Writes, res.Pruned, res.Err = done.Writes, done.Pruned, done.Err
	if kept := script.KeptBlocks(done); kept > 0 {
		log.FromContext(ctx).Info("Keeping the move block on the release's Clusters until a pass finishes the correction",
			"clusters", kept, "error", res.Err.Error())
	}
	if lifted := apply.Run(ctx, p.target.Client, script.Lifts(done), e.DeleteWait); lifted.Err != nil && res.Err == nil {
		res.Err = lifted.Err
	}
}

// newResult is the result of a pass that has decided nothing yet.
func newResult(start plan.PassStart) *Result {
	return &Result{Decisions: plan.Decisions{Options: start.Options, Act: start.Act}}
}

// plan gathers and decides one pass: the facts, the gates, the decisions.
// A gate that stops the pass sets res.Verdict; an error is returned as it
// was met.
func (e *Engine) plan(ctx context.Context, hr *helmv2.HelmRelease, tg *target.Target, res *Result, facts plan.Facts) (*pass, error) {
	p := &pass{engine: e, hr: hr, target: tg, res: res}
	if err := p.gather(ctx, &facts); err != nil {
		return p, err
	}
	if v, stop := plan.Evaluate(facts, plan.LiveGates); stop {
		res.Verdict = &v
		return p, nil
	}
	return p, p.decide(ctx)
}

// verdictOrFail ends a pass: with its verdict, or with err as a verdict
// when the plan says the error is the release's or the user's
// (plan.ErrorVerdict), or as a failed pass, retried with back-off.
func verdictOrFail(res *Result, err error) (*Result, error) {
	if err == nil {
		return res, nil
	}
	if v, ok := plan.ErrorVerdict(err); ok {
		res.Verdict = &v
		return res, nil
	}
	return nil, err
}

func (e *Engine) target(ctx context.Context, req Request) (*target.Target, error) {
	if req.Target != nil {
		return req.Target, nil
	}
	return e.Targets.For(ctx, req.HelmRelease)
}

// split cuts a release's manifest into the objects the pipeline works on.
func (e *Engine) split(rel *release.Release) (manifest.Objects, error) {
	all, err := rel.Objects(e.MaxManifestBytes)
	if err != nil {
		return manifest.Objects{}, fmt.Errorf("failed to read manifest of release %s: %w", rel.Ref(), err)
	}
	return manifest.SortByRole(all, e.Kinds)
}

// changesOf compares a template against its effective desired state.
func changesOf(desired, live, previous *unstructured.Unstructured, ignore []string) []diff.Change {
	if live == nil {
		return nil
	}
	return diff.Object(desired, live, diff.Options{Previous: previous, IgnorePaths: ignore})
}
