package plan_test

import (
	"testing"

	. "github.com/onsi/gomega"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/plan"
)

// TestStartPass: a pass writes only in enabled mode and never read-only; a
// read-only pass looks at a release that did not opt in, or is suspended.
func TestStartPass(t *testing.T) {
	cases := []struct {
		name                string
		mode                string // "" for no annotation
		suspended, readOnly bool
		wantMode            plan.Mode
		wantSuspended       bool
		wantAct             bool
	}{
		{name: "enabled", mode: api.ModeEnabled, wantMode: plan.ModeEnabled, wantAct: true},
		{name: "warn", mode: api.ModeWarn, wantMode: plan.ModeWarn},
		{name: "not opted in", wantMode: plan.ModeDisabled},
		{name: "enabled, suspended", mode: api.ModeEnabled, suspended: true, wantMode: plan.ModeEnabled, wantSuspended: true, wantAct: true},
		{name: "read-only, enabled: looks, never writes", mode: api.ModeEnabled, readOnly: true, wantMode: plan.ModeEnabled},
		{name: "read-only, not opted in: looked at as warn", readOnly: true, wantMode: plan.ModeWarn},
		{name: "read-only, suspended: looked at", mode: api.ModeWarn, suspended: true, readOnly: true, wantMode: plan.ModeWarn},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			ann := map[string]string{}
			if tc.mode != "" {
				ann[api.ModeAnnotation] = tc.mode
			}
			s := plan.StartPass(ann, tc.suspended, tc.readOnly, plan.RolloutsDeny)
			g.Expect(s.Options.Mode).To(Equal(tc.wantMode))
			g.Expect(s.Facts.Options).To(Equal(s.Options))
			g.Expect(s.Facts.Suspended).To(Equal(tc.wantSuspended))
			g.Expect(s.Act).To(Equal(tc.wantAct))
			g.Expect(s.Facts.ConfigErr).NotTo(HaveOccurred())
		})
	}
	s := plan.StartPass(map[string]string{api.ModeAnnotation: "sometimes"}, false, false, plan.RolloutsDeny)
	NewWithT(t).Expect(s.Facts.ConfigErr).To(HaveOccurred(), "a bad annotation is the gates' to report")
}

// TestDryRunLasting: only the answers about the request itself are
// remembered across passes.
func TestDryRunLasting(t *testing.T) {
	g := NewWithT(t)
	g.Expect(plan.DryRunAccepted.Lasting()).To(BeTrue())
	g.Expect(plan.DryRunLocked.Lasting()).To(BeTrue())
	g.Expect(plan.DryRunNotRun.Lasting()).To(BeTrue(), "no in-place dry-run: the dry-run create answered")
	g.Expect(plan.DryRunFailed.Lasting()).To(BeFalse())
}
