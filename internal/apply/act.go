package apply

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/diff"
	"github.com/templatedrift/template-drift-controller/internal/plan"
)

// act carries out the decisions in crash-safe order: templates in
// dependency order (replacements and recreations before anything names
// them), then consumer references, then the superseded-by marks. The first
// failure stops the pass: a later write might reference an object the
// failed one should have made.
func (s *scope) act(ctx context.Context) error {
	for i := range s.res.Templates {
		t := &s.res.Templates[i]
		if t.Failed != "" {
			return fmt.Errorf("%s/%s: %s", t.ID.Kind, t.ID.Name, t.Failed)
		}
		if err := s.actTemplate(ctx, t, s.desired[i], s.live[i]); err != nil {
			return err
		}
	}
	for i, cp := range s.res.Consumers {
		if len(cp.Changes) == 0 {
			continue
		}
		log.FromContext(ctx).Info("Repointing template references", "object", cp.ID.String(), "diff", diff.Summary(cp.Changes, 80, 10))
		if err := s.w.patch(ctx, s.consumers[i], cp.Changes); err != nil {
			return err
		}
	}
	for i, t := range s.res.Templates {
		if !t.MarkSuperseded {
			continue
		}
		ch := []diff.Change{markChange(s.live[i], t.RenameTo)}
		if err := s.w.patch(ctx, s.live[i], ch); err != nil {
			return err
		}
	}
	return nil
}

func (s *scope) actTemplate(ctx context.Context, t *TemplateResult, desired, live *unstructured.Unstructured) error {
	logger := log.FromContext(ctx).WithValues("template", t.ID.String(), "strategy", string(t.Strategy))
	c := s.req.Target.Client
	switch {
	case t.State == plan.StateMissing:
		logger.Info("Creating missing template from the release manifest")
		return s.w.create(ctx, plan.BuildRecreate(desired, nil, clusterOwners(s.clusters), s.planRelease()))
	case t.State != plan.StateDrifted:
		return nil
	case t.Strategy == plan.StrategyInPlace:
		logger.Info("Correcting template in place", "diff", diff.Summary(t.Changes, 80, 10))
		return s.w.patch(ctx, live, t.Changes)
	case t.Strategy == plan.StrategyRotate && t.CreateReplacement:
		owners, err := currentOwners(ctx, c, live)
		if err != nil {
			return err
		}
		logger.Info("Creating replacement template", "replacement", t.RenameTo, "diff", diff.Summary(t.Changes, 80, 10))
		return s.w.create(ctx, plan.BuildReplacement(desired, live, t.RenameTo, owners, s.planRelease()))
	case t.Strategy == plan.StrategyRecreate:
		owners, err := currentOwners(ctx, c, live)
		if err != nil {
			return err
		}
		obj := plan.BuildRecreate(desired, live, owners, s.planRelease())
		if err := s.w.validateCreate(ctx, obj); err != nil {
			return err
		}
		logger.Info("Recreating template", "diff", diff.Summary(t.Changes, 80, 10))
		if err := s.w.deleteExact(ctx, live); err != nil {
			return err
		}
		return s.w.create(ctx, obj)
	}
	return nil
}

// markChange sets the superseded-by annotation with a JSON-patch op whose
// parent exists.
func markChange(live *unstructured.Unstructured, to string) diff.Change {
	if live.GetAnnotations() == nil {
		return diff.Change{Path: "/metadata/annotations", Op: diff.OpAdd, After: map[string]any{api.SupersededByAnnotation: to}}
	}
	return diff.Change{Path: diff.Pointer("metadata", "annotations", api.SupersededByAnnotation), Op: diff.OpAdd, After: to}
}
