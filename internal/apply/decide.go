package apply

import (
	"context"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/templatedrift/template-drift-controller/internal/pair"
	"github.com/templatedrift/template-drift-controller/internal/plan"
)

// decide gathers and decides every template in dependency order, then every
// consumer. It writes nothing.
func (s *scope) decide(ctx context.Context) error {
	renames := map[pair.ID]string{}
	for _, manifest := range s.objs.Templates {
		tr, desired, live, err := s.decideTemplate(ctx, manifest, renames)
		if err != nil {
			return err
		}
		if tr.RenameTo != "" {
			renames[tr.ID] = tr.RenameTo
			s.rotations = append(s.rotations, plan.Rotation{From: tr.ID, To: tr.RenameTo, Marked: plan.IsMarked(live, tr.RenameTo)})
		}
		s.res.Templates = append(s.res.Templates, tr)
		s.desired, s.live = append(s.desired, desired), append(s.live, live)
	}
	for _, manifest := range s.objs.Consumers {
		live, err := getLive(ctx, s.req.Target.Client, manifest.GroupVersionKind(), manifest.GetNamespace(), manifest.GetName())
		if err != nil {
			return err
		}
		if live == nil {
			continue
		}
		cp, err := plan.DecideConsumer(live, s.rotations)
		if err != nil {
			return err
		}
		s.consumers = append(s.consumers, live)
		s.res.Consumers = append(s.res.Consumers, cp)
	}
	s.markRollouts()
	return nil
}

func (s *scope) decideTemplate(ctx context.Context, manifest *unstructured.Unstructured, renames map[pair.ID]string) (TemplateResult, *unstructured.Unstructured, *unstructured.Unstructured, error) {
	c := s.req.Target.Client
	desired, err := plan.EffectiveDesired(manifest, renames)
	if err != nil {
		return TemplateResult{}, nil, nil, err
	}
	live, err := getLive(ctx, c, manifest.GroupVersionKind(), manifest.GetNamespace(), manifest.GetName())
	if err != nil {
		return TemplateResult{}, nil, nil, err
	}
	in := plan.TemplateInput{Desired: desired, Live: live, Skip: s.skipReason(manifest, live),
		Requested: s.res.Options.Strategy, Helm: s.helm}
	if in.Skip == "" && live != nil {
		in.Changes = changesOf(desired, live, s.previous[pair.IDOf(manifest)], s.ignorer.PathsFor(manifest))
	}
	if len(in.Changes) > 0 && live.GetDeletionTimestamp() == nil {
		if plan.NeedsDryRun(in.Requested) {
			if in.DryRun, in.DryRunMessage, err = dryRunInPlace(ctx, c, live, in.Changes); err != nil {
				return TemplateResult{}, nil, nil, err
			}
		}
		if in.ReplacementName, err = plan.RotatedName(manifest.GetName(), desired.Object["spec"]); err != nil {
			return TemplateResult{}, nil, nil, err
		}
		if in.Replacement, err = getLive(ctx, c, manifest.GroupVersionKind(), manifest.GetNamespace(), in.ReplacementName); err != nil {
			return TemplateResult{}, nil, nil, err
		}
		if in.Replacement != nil {
			in.ReplacementChanges = changesOf(desired, in.Replacement, nil, s.ignorer.PathsFor(manifest))
		}
	}
	return TemplateResult{TemplatePlan: plan.DecideTemplate(in)}, desired, live, nil
}

// markRollouts records which rotations roll machines: those whose original
// or replacement a MachineDeployment or control plane of the release
// references, live. Computed from the live references, not from this pass's
// writes, so the report is the same on the pass that rotates and on every
// pass after it.
func (s *scope) markRollouts() {
	for i := range s.res.Templates {
		t := &s.res.Templates[i]
		for j, cp := range s.res.Consumers {
			t.Reverted = t.Reverted || slices.Contains(cp.RevertedFrom, t.ID)
			if t.RenameTo == "" || !pair.RollsMachines(cp.ID.GroupKind) {
				continue
			}
			refs, _ := pair.References(s.consumers[j])
			for _, r := range refs {
				if r.Target == t.ID || (r.Target.GroupKind == t.ID.GroupKind && r.Target.Name == t.RenameTo) {
					t.Rolls = true
				}
			}
		}
	}
}
