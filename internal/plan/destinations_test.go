package plan_test

import (
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/plan"
)

func TestDestinations(t *testing.T) {
	const to = "workers-5f1c2a9b0d"
	workers := id(manifest.Metal3MachineTemplateKind, "fleet", "workers")
	// liveMarked is the original as read this pass, carrying superseded-by.
	liveMarked := func(name string) *unstructured.Unstructured {
		o := fromYAML(t, m3mtLive)
		o.SetAnnotations(map[string]string{api.SupersededByAnnotation: name})
		return o
	}
	plain := fromYAML(t, m3mtLive)
	template := func(o plan.Outcome, s plan.Strategy, renameTo string, live *unstructured.Unstructured) plan.TemplatePlan {
		return plan.TemplatePlan{ID: workers, Outcome: o, Strategy: s, Rotation: &plan.Rotation{To: renameTo}, Live: live}
	}

	cases := []struct {
		name     string            // what the case proves
		template plan.TemplatePlan // the template's plan
		want     *plan.Destination // its target; nil for no entry
	}{{
		name:     "a rotation to do points at the replacement, not marked yet",
		template: template(plan.OutcomeDrifted, plan.StrategyRotate, to, plain),
		want:     &plan.Destination{Name: to},
	}, {
		name:     "a rotation whose original already names the replacement: marked, so a consumer on the original was set back",
		template: template(plan.OutcomeDrifted, plan.StrategyRotate, to, liveMarked(to)),
		want:     &plan.Destination{Name: to, Marked: true},
	}, {
		name:     "an original marked for an older replacement is not marked for this one",
		template: template(plan.OutcomeDrifted, plan.StrategyRotate, to, liveMarked("workers-0000000000")),
		want:     &plan.Destination{Name: to},
	}, {
		name:     "a rotation done earlier (superseded) still points at the replacement",
		template: template(plan.OutcomeSuperseded, plan.StrategyRotate, to, liveMarked(to)),
		want:     &plan.Destination{Name: to, Marked: true},
	}, {
		name:     "a rotation corrected for this release points at the replacement",
		template: template(plan.OutcomeCorrected, plan.StrategyRotate, to, liveMarked(to)),
		want:     &plan.Destination{Name: to, Marked: true},
	}, {
		name:     "a held rotation points the release's consumers at the replacement; its original is never marked",
		template: template(plan.OutcomeHeld, plan.StrategyRotate, to, plain),
		want:     &plan.Destination{Name: to},
	}, {
		name:     "in sync: the way back to the template's own name",
		template: template(plan.OutcomeInSync, "", "", liveMarked(to)),
		want:     &plan.Destination{Name: "workers"},
	}, {
		name:     "corrected in place or by recreate: its own name",
		template: template(plan.OutcomeCorrected, plan.StrategyRecreate, "", plain),
		want:     &plan.Destination{Name: "workers"},
	}, {
		name:     "drifted, corrected in place this pass: its own name",
		template: template(plan.OutcomeDrifted, plan.StrategyInPlace, "", plain),
		want:     &plan.Destination{Name: "workers"},
	}, {
		name:     "drifted, recreated this pass: no entry while it is deleted and created",
		template: template(plan.OutcomeDrifted, plan.StrategyRecreate, "", plain),
	}, {
		name:     "failed: no entry, consumers stay",
		template: template(plan.OutcomeFailed, plan.StrategyRotate, "", plain),
	}, {
		name:     "blocked: no entry, consumers stay",
		template: template(plan.OutcomeBlocked, plan.StrategyRecreate, "", plain),
	}, {
		name:     "skipped: no entry",
		template: template(plan.OutcomeSkipped, "", "", plain),
	}, {
		name:     "missing: no entry",
		template: template(plan.OutcomeMissing, plan.StrategyRecreate, "", nil),
	}, {
		name:     "waiting for its deletion: no entry",
		template: template(plan.OutcomeWaiting, "", "", plain),
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			got := plan.Destinations([]plan.TemplatePlan{tc.template})
			if tc.want == nil {
				g.Expect(got).To(BeEmpty())
				return
			}
			g.Expect(got).To(Equal(map[manifest.ID]plan.Destination{workers: *tc.want}))
		})
	}
}

// TestDestinationsSeveral: one entry per template, keyed by its ID.
func TestDestinationsSeveral(t *testing.T) {
	g := NewWithT(t)
	data := id(manifest.Metal3DataTemplateKind, "fleet", "workers-data")
	workers := id(manifest.Metal3MachineTemplateKind, "fleet", "workers")
	cp := id(manifest.Metal3MachineTemplateKind, "fleet", "cp")
	got := plan.Destinations([]plan.TemplatePlan{
		{ID: data, Outcome: plan.OutcomeDrifted, Strategy: plan.StrategyRotate, Rotation: &plan.Rotation{To: "workers-data-1"}},
		{ID: workers, Outcome: plan.OutcomeInSync},
		{ID: cp, Outcome: plan.OutcomeFailed},
	})
	g.Expect(got).To(Equal(map[manifest.ID]plan.Destination{
		data:    {Name: "workers-data-1"},
		workers: {Name: "workers"},
	}))
	g.Expect(plan.Destinations(nil)).To(BeEmpty())
}
