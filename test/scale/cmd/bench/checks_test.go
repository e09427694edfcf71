package main

import (
	"testing"

	. "github.com/onsi/gomega"

	"github.com/templatedrift/template-drift-controller/test/scale"
)

// TestSteadyStateChecks: each controller's steady state is judged by its
// own rules, and every controller has some.
func TestSteadyStateChecks(t *testing.T) {
	quiet := scale.Requests{ByVerb: map[string]int{}, ByResource: map[string]int{}}
	tests := []struct {
		name string
		r    scale.Result
		// want are substrings of the errors, in order; none for a pass.
		want []string
	}{
		{name: "the add-on, quiet", r: scale.Result{Controller: scale.TemplateDriftController, Requests: quiet}},
		{name: "the add-on writes and asks for discovery", r: scale.Result{Controller: scale.TemplateDriftController, Writes: 2,
			Requests: scale.Requests{Total: 3, ByResource: map[string]int{"patch helmreleases/status": 2, "get /apis": 1}}},
			want: []string{"wrote 2 times", "1 discovery requests"}},
		{name: "the lockdown, one request a pass", r: scale.Result{Controller: scale.Lockdown, Reconciles: 100,
			Requests: scale.Requests{Total: 100 + inFlight, ByResource: map[string]int{"list secrets": 100 + inFlight}}}},
		{name: "the lockdown, more than one a pass", r: scale.Result{Controller: scale.Lockdown, Reconciles: 100,
			Requests: scale.Requests{Total: 150, ByResource: map[string]int{"list secrets": 150}}},
			want: []string{"made 150 requests in the steady state, over 100 passes"}},
		{name: "helm-controller writes on every pass", r: scale.Result{Controller: scale.HelmController, Writes: 45, Requests: quiet}},
		{name: "helm-controller upgraded", r: scale.Result{Controller: scale.HelmController, Upgrades: 1, Requests: quiet},
			want: []string{"upgraded 1 times"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			errs := steadyStateChecks[tt.r.Controller](tt.r)
			g.Expect(errs).To(HaveLen(len(tt.want)))
			for i, want := range tt.want {
				g.Expect(errs[i]).To(MatchError(ContainSubstring(want)))
			}
		})
	}
	g := NewWithT(t)
	for _, name := range scale.DefaultControllers {
		g.Expect(steadyStateChecks).To(HaveKey(name))
	}
}
