package plan_test

import (
	"errors"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	. "github.com/onsi/gomega"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/plan"
)

// TestEvaluateGateOrder starts from facts that trip every gate and lifts one
// trip at a time: each step must be answered by the next gate in the chain,
// with that gate's full verdict.
func TestEvaluateGateOrder(t *testing.T) {
	cfgErr := errors.New("invalid configuration: annotation templatedrift.io/mode=\"on\"")
	relErr := errors.New("release fleet/cluster-a.v3 not found")
	all := plan.Facts{
		Options:        plan.Options{Mode: "on", Strategy: plan.StrategyAuto},
		ConfigErr:      cfgErr,
		Suspended:      true,
		ReleaseErr:     relErr,
		ReleaseStatus:  "pending-upgrade",
		PausedClusters: []string{"fleet/b", "fleet/a"},
	}
	cases := []struct {
		name   string              // which gate must answer
		facts  func(f *plan.Facts) // lifts the trips of every earlier gate from all
		want   plan.Verdict        // the full verdict expected
		noStop bool                // no gate stops
	}{{
		name:  "config first, even with everything else tripped",
		facts: func(*plan.Facts) {},
		want:  plan.Verdict{Status: metav1.ConditionFalse, Reason: api.InvalidConfigurationReason, Message: cfgErr.Error()},
	}, {
		name: "disabled next: a config error with mode disabled removes the condition",
		facts: func(f *plan.Facts) {
			f.Options.Mode = plan.ModeDisabled
		},
		want: plan.Verdict{Remove: true},
	}, {
		name: "suspended next: silent",
		facts: func(f *plan.Facts) {
			f.Options.Mode, f.ConfigErr = plan.ModeEnabled, nil
		},
		want: plan.Verdict{Silent: true},
	}, {
		name: "release error next",
		facts: func(f *plan.Facts) {
			f.Options.Mode, f.ConfigErr, f.Suspended = plan.ModeEnabled, nil, false
		},
		want: plan.Verdict{Status: metav1.ConditionUnknown, Reason: api.ReleaseUnavailableReason, Message: relErr.Error()},
	}, {
		name: "release status next",
		facts: func(f *plan.Facts) {
			f.Options.Mode, f.ConfigErr, f.Suspended, f.ReleaseErr = plan.ModeEnabled, nil, false, nil
		},
		want: plan.Verdict{Status: metav1.ConditionUnknown, Reason: api.ReleaseUnavailableReason, Message: "waiting: stored release is pending-upgrade"},
	}, {
		name: "paused clusters last",
		facts: func(f *plan.Facts) {
			f.Options.Mode, f.ConfigErr, f.Suspended, f.ReleaseErr, f.ReleaseStatus = plan.ModeEnabled, nil, false, nil, "deployed"
		},
		want: plan.Verdict{Status: metav1.ConditionUnknown, Reason: api.ClusterPausedReason, Message: "waiting: Cluster fleet/a, fleet/b is paused"},
	}, {
		name: "nothing tripped: no stop",
		facts: func(f *plan.Facts) {
			f.Options.Mode, f.ConfigErr, f.Suspended, f.ReleaseErr, f.ReleaseStatus, f.PausedClusters = plan.ModeEnabled, nil, false, nil, "deployed", nil
		},
		noStop: true,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			f := all
			f.PausedClusters = append([]string(nil), all.PausedClusters...)
			tc.facts(&f)
			v, stop := plan.Evaluate(f, plan.Gates)
			g.Expect(stop).To(Equal(!tc.noStop))
			g.Expect(v).To(Equal(tc.want))
		})
	}
}

func TestGateRelease(t *testing.T) {
	cases := []struct {
		name       string // what the case proves
		status     string // stored release's Helm status
		releaseErr error  // why the release cannot be used
		wantStop   bool   // the gate stops the pass
		wantMsg    string // verdict message when it stops
	}{
		{name: "deployed passes", status: "deployed"},
		{name: "failed passes", status: "failed"},
		{name: "pending-install waits", status: "pending-install", wantStop: true, wantMsg: "waiting: stored release is pending-install"},
		{name: "pending-upgrade waits", status: "pending-upgrade", wantStop: true, wantMsg: "waiting: stored release is pending-upgrade"},
		{name: "pending-rollback waits", status: "pending-rollback", wantStop: true, wantMsg: "waiting: stored release is pending-rollback"},
		{name: "superseded waits", status: "superseded", wantStop: true, wantMsg: "waiting: stored release is superseded"},
		{name: "uninstalled waits", status: "uninstalled", wantStop: true, wantMsg: "waiting: stored release is uninstalled"},
		{name: "uninstalling waits", status: "uninstalling", wantStop: true, wantMsg: "waiting: stored release is uninstalling"},
		{name: "status is case sensitive", status: "Deployed", wantStop: true, wantMsg: "waiting: stored release is Deployed"},
		{
			name: "ReleaseErr stops even when the status is deployed", status: "deployed",
			releaseErr: errors.New("history digest mismatch"), wantStop: true, wantMsg: "history digest mismatch",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			f := plan.Facts{Options: plan.Options{Mode: plan.ModeEnabled}, ReleaseStatus: tc.status, ReleaseErr: tc.releaseErr}
			v, stop := plan.GateRelease(f)
			g.Expect(stop).To(Equal(tc.wantStop))
			if !tc.wantStop {
				g.Expect(v).To(Equal(plan.Verdict{}))
			} else {
				g.Expect(v).To(Equal(plan.Verdict{Status: metav1.ConditionUnknown, Reason: api.ReleaseUnavailableReason, Message: tc.wantMsg}))
			}
			// The full chain gives the same answer when no earlier gate trips.
			cv, cstop := plan.Evaluate(f, plan.Gates)
			g.Expect(cstop).To(Equal(stop))
			g.Expect(cv).To(Equal(v))
		})
	}
}

func TestGatePaused(t *testing.T) {
	cases := []struct {
		name     string   // what the case proves
		paused   []string // PausedClusters as gathered
		wantStop bool     // the gate stops
		wantMsg  string   // verdict message
	}{
		{name: "no paused cluster passes"},
		{name: "empty non-nil list passes", paused: []string{}},
		{name: "one paused cluster", paused: []string{"fleet/a"}, wantStop: true, wantMsg: "waiting: Cluster fleet/a is paused"},
		{
			name: "names are listed sorted", paused: []string{"zeta/z", "fleet/b", "fleet/a"},
			wantStop: true, wantMsg: "waiting: Cluster fleet/a, fleet/b, zeta/z is paused",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			before := slices.Clone(tc.paused)
			v, stop := plan.GatePaused(plan.Facts{PausedClusters: tc.paused})
			g.Expect(stop).To(Equal(tc.wantStop))
			if tc.wantStop {
				g.Expect(v).To(Equal(plan.Verdict{Status: metav1.ConditionUnknown, Reason: api.ClusterPausedReason, Message: tc.wantMsg}))
			} else {
				g.Expect(v).To(Equal(plan.Verdict{}))
			}
			g.Expect(tc.paused).To(Equal(before), "the gathered list must not be reordered in place")
		})
	}
}

func TestSingleGates(t *testing.T) {
	cfgErr := errors.New("bad")
	cases := []struct {
		name     string       // what the case proves
		gate     plan.Gate    // gate under test
		facts    plan.Facts   // its input
		wantStop bool         // the gate stops
		want     plan.Verdict // its verdict
	}{
		{name: "config: no error passes", gate: plan.GateConfig, facts: plan.Facts{Options: plan.Options{Mode: plan.ModeEnabled}}},
		{
			name: "config: error with mode warn stops", gate: plan.GateConfig, wantStop: true,
			facts: plan.Facts{Options: plan.Options{Mode: plan.ModeWarn}, ConfigErr: cfgErr},
			want:  plan.Verdict{Status: metav1.ConditionFalse, Reason: api.InvalidConfigurationReason, Message: "bad"},
		},
		{name: "config: error with mode disabled passes", gate: plan.GateConfig, facts: plan.Facts{Options: plan.Options{Mode: plan.ModeDisabled}, ConfigErr: cfgErr}},
		{name: "disabled: enabled passes", gate: plan.GateDisabled, facts: plan.Facts{Options: plan.Options{Mode: plan.ModeEnabled}}},
		{name: "disabled: warn passes", gate: plan.GateDisabled, facts: plan.Facts{Options: plan.Options{Mode: plan.ModeWarn}}},
		{
			name: "disabled: disabled removes", gate: plan.GateDisabled, wantStop: true,
			facts: plan.Facts{Options: plan.Options{Mode: plan.ModeDisabled}}, want: plan.Verdict{Remove: true},
		},
		{name: "suspended: not suspended passes", gate: plan.GateSuspended, facts: plan.Facts{}},
		{name: "suspended: suspended is silent", gate: plan.GateSuspended, wantStop: true, facts: plan.Facts{Suspended: true}, want: plan.Verdict{Silent: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			v, stop := tc.gate(tc.facts)
			g.Expect(stop).To(Equal(tc.wantStop))
			g.Expect(v).To(Equal(tc.want))
		})
	}
}

// TestObjectGatesVersusGates: ObjectGates run before the release is read, so
// they must not look at release or cluster facts; Gates adds those.
func TestObjectGatesVersusGates(t *testing.T) {
	enabled := plan.Options{Mode: plan.ModeEnabled, Strategy: plan.StrategyAuto}
	cases := []struct {
		name        string     // what the case proves
		facts       plan.Facts // input
		objectStops bool       // Evaluate(facts, ObjectGates) stops
		gatesReason string     // Reason of Evaluate(facts, Gates); "" for no stop
	}{{
		name:        "zero release facts: object gates pass, full chain waits for the release",
		facts:       plan.Facts{Options: enabled},
		gatesReason: api.ReleaseUnavailableReason,
	}, {
		name:        "release error: object gates pass, full chain stops",
		facts:       plan.Facts{Options: enabled, ReleaseErr: errors.New("x"), ReleaseStatus: "deployed"},
		gatesReason: api.ReleaseUnavailableReason,
	}, {
		name:        "paused cluster: object gates pass, full chain stops",
		facts:       plan.Facts{Options: enabled, ReleaseStatus: "deployed", PausedClusters: []string{"fleet/a"}},
		gatesReason: api.ClusterPausedReason,
	}, {
		name:        "suspended: both stop",
		facts:       plan.Facts{Options: enabled, Suspended: true},
		objectStops: true,
	}, {
		name:  "usable release, nothing paused: neither stops",
		facts: plan.Facts{Options: enabled, ReleaseStatus: "failed"},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			ov, ostop := plan.Evaluate(tc.facts, plan.ObjectGates)
			g.Expect(ostop).To(Equal(tc.objectStops))
			gv, gstop := plan.Evaluate(tc.facts, plan.Gates)
			g.Expect(gstop).To(Equal(tc.objectStops || tc.gatesReason != ""))
			if tc.objectStops {
				g.Expect(gv).To(Equal(ov), "the full chain starts with the object gates")
			} else {
				g.Expect(gv.Reason).To(Equal(tc.gatesReason))
			}
		})
	}
	g := NewWithT(t)
	g.Expect(plan.ObjectGates).To(HaveLen(3))
	g.Expect(plan.Gates).To(HaveLen(5))
	v, stop := plan.Evaluate(plan.Facts{}, nil)
	g.Expect(stop).To(BeFalse(), "no gates, no stop")
	g.Expect(v).To(Equal(plan.Verdict{}))
}
