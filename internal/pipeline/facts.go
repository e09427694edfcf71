package pipeline

import (
	"context"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/templatedrift/template-drift-controller/internal/diff"
	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/plan"
	"github.com/templatedrift/template-drift-controller/internal/release"
)

// gather reads what the gates look at into facts: Helm's storage state,
// the stored release and its objects, the release's live Clusters,
// templates and consumers, the ignore rules. The live objects are read
// here once, for the gates (pause markers) and for decide.
func (p *pass) gather(ctx context.Context, facts *plan.Facts) error {
	if err := p.gatherStorage(ctx, facts); err != nil {
		return err
	}
	rel, objs, err := p.readRelease(ctx)
	if err := facts.RecordStorageError(err); err != nil {
		return err
	}
	if rel != nil {
		p.rel, p.res.Release, facts.ReleaseStatus = rel, rel, rel.Status
		p.helm = plan.HelmFactsOf(p.hr, plan.ApplyMethod(rel.ApplyMethod))
		facts.Helm = p.helm
	}
	p.objs = objs
	if facts.ReleaseErr == nil && facts.ConfigErr == nil {
		if err := p.gatherLive(ctx, facts); err != nil {
			return err
		}
	}
	ignorer, err := diff.NewIgnorer(p.hr.GetDriftDetection().Ignore)
	if err != nil && facts.ConfigErr == nil {
		facts.ConfigErr = fmt.Errorf("%w: spec.driftDetection.ignore: %w", plan.ErrInvalidConfiguration, err)
	}
	p.ignorer = ignorer
	return nil
}

// gatherStorage lists the release's versions in Helm storage (metadata
// only) and records them with the version status.history names, which is
// how the gates see Helm in flight. Without the list a pass cannot tell
// that Helm is writing, so it does not go on (plan.Facts.RecordStorageError).
func (p *pass) gatherStorage(ctx context.Context, facts *plan.Facts) error {
	if snap := p.hr.Status.History.Latest(); snap != nil {
		facts.HistoryVersion = snap.Version
	}
	stored, err := p.engine.Releases.Stored(ctx, p.source(), p.hr.GetStorageNamespace(), release.Name(p.hr))
	if err != nil {
		return facts.RecordStorageError(err)
	}
	p.stored = stored
	for _, s := range stored {
		facts.Stored = append(facts.Stored, plan.StoredRelease{Version: s.Version, Status: s.Status})
	}
	return nil
}

// gatherLive reads the release's Clusters, templates and consumers live,
// and records the Clusters missing, being deleted or paused, and the
// paused templates (those the pass would look at: not skipped) and
// consumers.
func (p *pass) gatherLive(ctx context.Context, facts *plan.Facts) error {
	objs := slices.Concat(p.objs.Clusters, p.objs.Templates, p.objs.Consumers)
	live, err := p.target.GetEach(ctx, objs)
	if err != nil {
		return err
	}
	p.live = map[manifest.ID]*unstructured.Unstructured{}
	var looked []*unstructured.Unstructured
	for i, m := range objs {
		switch o := live[i]; {
		case i < len(p.objs.Clusters):
			if o != nil {
				p.clusters = append(p.clusters, o)
			}
		case i < len(p.objs.Clusters)+len(p.objs.Templates):
			p.live[manifest.IDOf(m)] = o
			if o != nil && plan.SkipReason(m, o, p.rel.Name, p.rel.Namespace) == "" {
				looked = append(looked, o)
			}
		default:
			p.live[manifest.IDOf(m)] = o
			looked = append(looked, o)
		}
	}
	facts.MissingClusters, facts.DeletingClusters = plan.UnavailableClusters(p.objs.Clusters, p.clusters)
	facts.PausedClusters = plan.PausedClusters(p.clusters)
	facts.PausedObjects = plan.PausedObjects(looked)
	return nil
}

// readRelease reads the release helm-controller's history names and splits
// its manifest. Every error it returns is the release's fault.
func (p *pass) readRelease(ctx context.Context) (*release.Release, manifest.Objects, error) {
	snap := p.hr.Status.History.Latest()
	if snap == nil {
		return nil, manifest.Objects{}, fmt.Errorf("%w: HelmRelease has no release in its history", release.ErrReleaseNotFound)
	}
	rel, err := p.engine.Releases.GetFor(ctx, p.source(), p.hr.GetStorageNamespace(), release.Name(p.hr), snap, p.stored)
	if err != nil {
		return nil, manifest.Objects{}, err
	}
	if err := release.VerifySnapshot(rel, snap); err != nil {
		return rel, manifest.Objects{}, fmt.Errorf("HelmRelease %s/%s: %w", p.hr.Namespace, p.hr.Name, err)
	}
	objs, err := p.engine.split(rel)
	return rel, objs, err
}

// readPrevious indexes the templates of the previous deployed release,
// whose values let the diff tell a field the chart dropped from one someone
// else added. It is a refinement: when it cannot be read, the diff runs
// without it, and the reason is logged.
func (p *pass) readPrevious(ctx context.Context) {
	p.previous = map[manifest.ID]*unstructured.Unstructured{}
	logger := log.FromContext(ctx).V(1)
	prev, err := p.engine.Releases.PreviousDeployedIn(ctx, p.source(), p.hr.GetStorageNamespace(), p.rel.Name, p.rel.Version, p.stored)
	if err != nil {
		logger.Info("Comparing without the previous release: it cannot be read", "release", p.rel.Ref(), "reason", err.Error())
		return
	}
	if prev == nil {
		return
	}
	objs, err := p.engine.split(prev)
	if err != nil {
		logger.Info("Comparing without the previous release: its manifest cannot be used", "release", prev.Ref(), "reason", err.Error())
		return
	}
	for _, o := range objs.Templates {
		p.previous[manifest.IDOf(o)] = o
	}
}
