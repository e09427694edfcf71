package apply

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/templatedrift/template-drift-controller/internal/diff"
	"github.com/templatedrift/template-drift-controller/internal/plan"
)

// Act carries out the decisions in crash-safe order: templates in
// dependency order (replacements and recreations before anything names
// them), then consumer references, then the superseded-by marks. It stops at a
// template whose writes stop there (TemplatePlan.StopsWrites) and at the
// first write that fails. It returns how many writes it made.
func Act(ctx context.Context, c client.Client, d plan.Decisions, rel plan.Release, clusters []*unstructured.Unstructured, deleteWait time.Duration) (int, error) {
	w := &writer{c: c, deleteWait: deleteWait}
	for _, t := range d.Templates {
		if t.StopsWrites() {
			return w.writes, fmt.Errorf("%s/%s: %s", t.ID.Kind, t.ID.Name, t.Message)
		}
		if err := actTemplate(ctx, w, t, rel, clusters); err != nil {
			return w.writes, err
		}
	}
	for _, cp := range d.Consumers {
		if len(cp.Changes) == 0 {
			continue
		}
		log.FromContext(ctx).Info("Repointing template references", "object", klog.KObj(cp.Live), "kind", cp.ID.Kind, "diff", diff.Summary(cp.Changes, 80, 10))
		if err := w.patch(ctx, cp.Live, cp.Changes); err != nil {
			return w.writes, err
		}
	}
	for _, t := range d.Templates {
		switch {
		case t.Needs(plan.WriteMarkSuperseded):
			log.FromContext(ctx).Info("Marking template superseded", "template", klog.KObj(t.Live), "kind", t.ID.Kind, "replacement", t.RenameTo())
			if err := w.patch(ctx, t.Live, plan.MarkChanges(t)); err != nil {
				return w.writes, err
			}
		case t.Needs(plan.WriteUnmark):
			log.FromContext(ctx).Info("Template matches the manifest again; removing its superseded-by mark", "template", klog.KObj(t.Live), "kind", t.ID.Kind)
			if err := w.patch(ctx, t.Live, plan.UnmarkChanges()); err != nil {
				return w.writes, err
			}
		}
	}
	return w.writes, nil
}

// actTemplate makes a template's own writes, each logged before it is made.
func actTemplate(ctx context.Context, w *writer, t plan.TemplatePlan, rel plan.Release, clusters []*unstructured.Unstructured) error {
	logger := log.FromContext(ctx).WithValues("template", klog.KObj(t.Desired), "kind", t.ID.Kind, "strategy", string(t.Strategy))
	switch {
	case t.Needs(plan.WritePatch):
		logger.Info("Correcting template in place", "diff", diff.Summary(t.Changes, 80, 10))
		return w.patch(ctx, t.Live, plan.PatchChanges(t, rel.Ref))
	case t.Needs(plan.WriteCreateReplacement):
		owners, err := currentOwners(ctx, w.c, t.Live)
		if err != nil {
			return err
		}
		logger.Info("Creating replacement template", "replacement", t.RenameTo(), "diff", diff.Summary(t.Changes, 80, 10))
		return w.create(ctx, plan.BuildReplacement(t.Desired, t.Live, t.RenameTo(), owners, rel))
	case t.Needs(plan.WriteDelete):
		owners, err := currentOwners(ctx, w.c, t.Live)
		if err != nil {
			return err
		}
		obj := plan.BuildRecreate(t.Desired, t.Live, owners, rel, t.DriftDigest)
		if err := w.validateCreate(ctx, obj); err != nil {
			return err
		}
		logger.Info("Recreating template", "diff", diff.Summary(t.Changes, 80, 10))
		if err := w.deleteExact(ctx, t.Live); err != nil {
			return err
		}
		return w.create(ctx, obj)
	case t.Needs(plan.WriteCreate):
		logger.Info("Creating missing template from the release manifest")
		return w.create(ctx, plan.BuildRecreate(t.Desired, nil, clusterOwners(clusters, t.Desired.GetNamespace()), rel, t.DriftDigest))
	}
	return nil
}
