package plan_test

import (
	"errors"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/plan"
)

// TestAnnounce: the events a pass fires besides its condition's.
func TestAnnounce(t *testing.T) {
	reverted := plan.TemplatePlan{Outcome: plan.OutcomeCorrected, Rotation: &plan.Rotation{To: "workers-1", Reverted: true}}
	d := plan.Decisions{Act: true, Templates: []plan.TemplatePlan{reverted, {Outcome: plan.OutcomeInSync}}}
	cases := []struct {
		name    string
		reason  string
		writes  int
		actErr  error
		pruned  int
		verdict bool
		want    plan.Announcements
	}{
		{name: "corrected and in sync: the condition's event tells it", reason: api.DriftCorrectedReason, writes: 2,
			want: plan.Announcements{Reverted: []plan.TemplatePlan{reverted}}},
		{name: "corrections made, another template blocked", reason: api.CorrectionBlockedReason, writes: 2,
			want: plan.Announcements{Corrections: true, Reverted: []plan.TemplatePlan{reverted}}},
		{name: "corrections made, drift left", reason: api.DriftDetectedReason, writes: 1,
			want: plan.Announcements{Corrections: true, Reverted: []plan.TemplatePlan{reverted}}},
		{name: "corrections made, an ownership conflict", reason: api.OwnershipConflictReason, writes: 1,
			want: plan.Announcements{Corrections: true, Reverted: []plan.TemplatePlan{reverted}}},
		{name: "nothing written: nothing to tell", reason: api.DriftDetectedReason},
		{name: "a write failed: the condition's event tells it", reason: api.CorrectionFailedReason, writes: 1, actErr: errors.New("boom")},
		{name: "replacements deleted", reason: api.NoDriftDetectedReason, pruned: 2, want: plan.Announcements{Pruned: true}},
		{name: "a verdict: nothing else", reason: api.ReleaseInProgressReason, verdict: true, writes: 1, pruned: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := d
			if tc.verdict {
				d.Verdict = &plan.Verdict{Status: metav1.ConditionUnknown, Reason: tc.reason}
			}
			c := plan.Conclusion{Reason: tc.reason}
			NewWithT(t).Expect(plan.Announce(d, c, tc.writes, tc.actErr, tc.pruned)).To(Equal(tc.want))
		})
	}
}
