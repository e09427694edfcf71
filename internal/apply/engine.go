package apply

import (
	"context"
	"errors"
	"fmt"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/diff"
	"github.com/templatedrift/template-drift-controller/internal/pair"
	"github.com/templatedrift/template-drift-controller/internal/plan"
	"github.com/templatedrift/template-drift-controller/internal/release"
)

// Engine runs the pipeline for one HelmRelease: release → pair → diff →
// plan → apply. It is shared by the controller and the read-only diff
// command.
type Engine struct {
	// Kinds selects the template kinds.
	Kinds *pair.KindMatcher
	// Releases reads stored releases, memoized.
	Releases *release.Reader
	// MaxManifestBytes bounds the manifest parsed.
	MaxManifestBytes int
	// DeleteWait bounds how long a recreate waits for its delete.
	DeleteWait time.Duration
}

// Request is one pass.
type Request struct {
	HelmRelease *helmv2.HelmRelease
	Target      *Target
	// ReadOnly forbids writes, whatever the mode, and looks at releases
	// that did not opt in or are suspended (the diff command).
	ReadOnly bool
}

// Result is what a pass found and did, for the reporter.
type Result struct {
	// Verdict is set when a gate stopped the pass.
	Verdict *plan.Verdict
	// Options as parsed from the HelmRelease.
	Options plan.Options
	// Release is the stored release the pass worked from.
	Release *release.Release
	// Templates and Consumers are the decisions, in order.
	Templates []TemplateResult
	Consumers []plan.ConsumerPlan
	// Writes counts the writes made.
	Writes int
	// Err is the first failed write or read after the gates.
	Err error
}

// TemplateResult is a template's decision and what came of it.
type TemplateResult struct {
	plan.TemplatePlan
	// Rolls is true when the correction rolls machines.
	Rolls bool
	// Reverted is true when a consumer had been set back to the original.
	Reverted bool
}

// Run performs one pass. Errors that are the release's or the user's fault
// come back as a Verdict; an error return means the pass could not run and
// should be retried.
func (e *Engine) Run(ctx context.Context, req Request) (*Result, error) {
	hr := req.HelmRelease
	res := &Result{}
	opts, cfgErr := plan.ParseOptions(hr.GetAnnotations())
	suspended := hr.Spec.Suspend
	if req.ReadOnly {
		// An operator's diff looks whatever the opt-in and suspend say.
		if opts.Mode == plan.ModeDisabled {
			opts.Mode = plan.ModeWarn
		}
		suspended = false
	}
	res.Options = opts
	facts := plan.Facts{Options: opts, ConfigErr: cfgErr, Suspended: suspended}
	if v, stop := plan.Evaluate(facts, plan.ObjectGates); stop {
		res.Verdict = &v
		return res, nil
	}
	rel, objs, err := e.readRelease(ctx, req)
	if err != nil {
		facts.ReleaseErr = err
		if errors.Is(err, pair.ErrCrossNamespaceRef) {
			facts.ReleaseErr, facts.ConfigErr = nil, err
		}
	}
	if rel != nil {
		res.Release, facts.ReleaseStatus = rel, rel.Status
	}
	if facts.ReleaseErr == nil && facts.ConfigErr == nil {
		if facts.PausedClusters, err = pausedClusters(ctx, req.Target, objs.Clusters); err != nil {
			return nil, err
		}
	}
	ignorer, err := diff.NewIgnorer(hr.GetDriftDetection().Ignore)
	if err != nil && facts.ConfigErr == nil {
		facts.ConfigErr = fmt.Errorf("%w: spec.driftDetection.ignore: %w", plan.ErrInvalidConfiguration, err)
	}
	if v, stop := plan.Evaluate(facts, plan.Gates); stop {
		res.Verdict = &v
		return res, nil
	}
	s := &scope{engine: e, req: req, rel: rel, objs: objs, res: res, ignorer: ignorer,
		w: &writer{c: req.Target.Client, deleteWait: e.DeleteWait}}
	if err := s.prepare(ctx); err != nil {
		return nil, err
	}
	if err := s.decide(ctx); err != nil {
		if errors.Is(err, pair.ErrCrossNamespaceRef) {
			res.Verdict = &plan.Verdict{Status: "False", Reason: api.InvalidConfigurationReason, Message: err.Error()}
			return res, nil
		}
		return nil, err
	}
	if !req.ReadOnly && opts.Mode == plan.ModeEnabled {
		res.Err = s.act(ctx)
	}
	res.Writes = s.w.writes
	return res, nil
}

// readRelease reads the release helm-controller's history names and splits
// its manifest. Every error it returns is the release's fault.
func (e *Engine) readRelease(ctx context.Context, req Request) (*release.Release, pair.Objects, error) {
	hr := req.HelmRelease
	snap := hr.Status.History.Latest()
	if snap == nil {
		return nil, pair.Objects{}, fmt.Errorf("%w: HelmRelease has no release in its history", release.ErrReleaseNotFound)
	}
	src := release.Source{Secrets: req.Target.Secrets, Meta: req.Target.Client, Key: req.Target.Key}
	rel, err := e.Releases.Get(ctx, src, hr.GetStorageNamespace(), release.Name(hr), snap.Version)
	if err != nil {
		return nil, pair.Objects{}, err
	}
	if err := release.VerifySnapshot(rel, snap); err != nil {
		return rel, pair.Objects{}, err
	}
	objs, err := e.split(rel)
	if err != nil {
		return rel, pair.Objects{}, err
	}
	for _, o := range append(append([]*unstructured.Unstructured{}, objs.Templates...), objs.Consumers...) {
		if _, err := pair.References(o); err != nil {
			return rel, objs, err
		}
	}
	return rel, objs, nil
}

func (e *Engine) split(rel *release.Release) (pair.Objects, error) {
	all, err := pair.Split(rel.Manifest, rel.Namespace, e.MaxManifestBytes)
	if err != nil {
		return pair.Objects{}, fmt.Errorf("failed to read manifest of release %s: %w", rel.Ref(), err)
	}
	return pair.Classify(all, e.Kinds), nil
}

// pausedClusters reads the release's Clusters live.
func pausedClusters(ctx context.Context, t *Target, clusters []*unstructured.Unstructured) ([]string, error) {
	var out []string
	for _, cl := range clusters {
		live, err := getLive(ctx, t.Client, cl.GroupVersionKind(), cl.GetNamespace(), cl.GetName())
		if err != nil {
			return nil, err
		}
		if live != nil && isPaused(live) {
			out = append(out, cl.GetNamespace()+"/"+cl.GetName())
		}
	}
	return out, nil
}

// changesOf compares a template against its effective desired state.
func changesOf(desired, live, previous *unstructured.Unstructured, ignore []string) []diff.Change {
	if live == nil {
		return nil
	}
	return diff.Object(desired, live, diff.Options{Previous: previous, IgnorePaths: ignore})
}
