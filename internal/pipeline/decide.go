package pipeline

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/templatedrift/template-drift-controller/internal/diff"
	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/plan"
	"github.com/templatedrift/template-drift-controller/internal/target"
)

// decide gathers what the templates' decisions need (the previous
// release's templates, who uses each template), then gathers and decides
// each template in dependency order: the one alternation of a pass, since
// each template's desired object names the replacements of the templates
// before it. Then it decides the release as a whole (plan.DecideRelease),
// purely. It writes nothing.
func (p *pass) decide(ctx context.Context) error {
	p.readPrevious(ctx)
	use, err := p.gatherUse(ctx)
	if err != nil {
		return err
	}
	p.use = use
	if p.res.Act {
		p.engine.Budget.Observe(p.key(), plan.ReleaseRollingOut(p.liveConsumers()))
	}
	renames := map[manifest.ID]string{}
	var templates []plan.TemplatePlan
	for _, m := range p.objs.Templates {
		in, err := p.gatherTemplate(ctx, m, renames)
		if err != nil {
			return err
		}
		tp := plan.DecideTemplate(in)
		if err := p.readOwners(ctx, tp); err != nil {
			return err
		}
		if tp.RenameTo() != "" {
			renames[tp.ID] = tp.RenameTo()
		}
		templates = append(templates, tp)
	}
	consumers := p.liveConsumers()
	in := plan.ReleaseInput{Options: p.res.Options, Act: p.res.Act, Release: p.planRelease(),
		Templates: templates, Consumers: consumers, Replaces: use.replaces, Kinds: use.kinds, Users: use.users}
	d, err := plan.DecideRelease(in)
	if err != nil {
		return err
	}
	if p.res.Act && d.StartsRollouts() && !p.engine.Budget.Claim(p.key()) {
		in.BudgetSpent = true
		if d, err = plan.DecideRelease(in); err != nil {
			return err
		}
	}
	p.res.Decisions = d
	return nil
}

// gatherTemplate reads what plan.DecideTemplate needs about one template:
// its drift against the live object gather read, confirmed with the server
// (see confirm), the server's answer to an in-place correction, and the
// replacement a rotation would use.
func (p *pass) gatherTemplate(ctx context.Context, m *unstructured.Unstructured, renames map[manifest.ID]string) (plan.TemplateInput, error) {
	desired, err := plan.EffectiveDesired(m, renames)
	if err != nil {
		return plan.TemplateInput{}, err
	}
	live := p.live[manifest.IDOf(m)]
	skip, conflict := plan.Ownership(m, live, p.rel.Name, p.rel.Namespace)
	in := plan.TemplateInput{Desired: desired, Live: live, Skip: skip, Conflict: conflict,
		Requested: p.res.Options.Strategy, Helm: p.helm, Release: p.rel.Ref(),
		Users: p.use.users[manifest.IDOf(m)], Holders: p.use.users.Holders(manifest.IDOf(m))}
	if in.Skip == "" && in.Conflict == "" && live != nil {
		in.Changes = changesOf(desired, live, p.previous[manifest.IDOf(m)], p.ignorer.PathsFor(m))
	}
	if len(in.Changes) == 0 || live.GetDeletionTimestamp() != nil {
		return in, nil
	}
	view, err := p.confirm(ctx, &in)
	if err != nil || len(in.Changes) == 0 {
		return in, err
	}
	if in.ReplacementName, err = plan.RotatedName(m.GetName(), desired.Object["spec"]); err != nil {
		return plan.TemplateInput{}, err
	}
	if !plan.ReadsReplacement(in) {
		return in, nil
	}
	if in.Replacement, err = target.Get(ctx, p.target.Read(), m.GroupVersionKind(), m.GetNamespace(), in.ReplacementName); err != nil {
		return plan.TemplateInput{}, err
	}
	if in.Replacement != nil {
		raw := changesOf(desired, in.Replacement, nil, p.ignorer.PathsFor(m))
		in.ReplacementChanges, _ = diff.Confirm(raw, view, in.Replacement)
	}
	return in, nil
}

// readOwners reads, for a template whose correction creates an object
// that takes over its owners (a replacement, a recreate) in a pass that
// may write, its owners as they are now (target.CurrentOwners).
func (p *pass) readOwners(ctx context.Context, tp plan.TemplatePlan) error {
	if !p.res.Act || tp.Live == nil || (!tp.Needs(plan.WriteCreateReplacement) && !tp.Needs(plan.WriteDelete)) {
		return nil
	}
	owners, err := target.CurrentOwners(ctx, p.target.Read(), tp.Live)
	if err != nil {
		return err
	}
	if p.owners == nil {
		p.owners = map[manifest.ID][]metav1.OwnerReference{}
	}
	p.owners[tp.ID] = owners
	return nil
}

// liveConsumers are the live objects of the manifest's consumers, those
// missing left out.
func (p *pass) liveConsumers() []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, m := range p.objs.Consumers {
		if live := p.live[manifest.IDOf(m)]; live != nil {
			out = append(out, live)
		}
	}
	return out
}
