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
// trip at a time, in chain order: each step must be answered by the next
// gate in the chain, with that gate's full verdict.
func TestEvaluateGateOrder(t *testing.T) {
	cfgErr := errors.New("invalid configuration: annotation templatedrift.io/mode=\"on\"")
	relErr := errors.New("release fleet/cluster-a.v3 not found")
	f := plan.Facts{
		Options:          plan.Options{Mode: "on", Strategy: plan.StrategyRotate},
		ConfigErr:        cfgErr,
		Suspended:        true,
		HistoryVersion:   3,
		Stored:           []plan.StoredRelease{{Version: 4, Status: "pending-upgrade"}, {Version: 3, Status: "deployed"}},
		ReleaseErr:       relErr,
		ReleaseStatus:    "uninstalled",
		Helm:             plan.HelmFacts{ApplyMethod: "ssa"},
		MissingClusters:  []string{"fleet/gone"},
		DeletingClusters: []string{"fleet/going"},
		PausedClusters:   []string{"fleet/b", "fleet/a"},
		PausedObjects:    []string{"Metal3MachineTemplate fleet/x"},
	}
	rotateUndone, _ := plan.GateRotateUndone(plan.Facts{Options: plan.Options{Strategy: plan.StrategyRotate}, Helm: plan.HelmFacts{ApplyMethod: "ssa"}})
	steps := []struct {
		name string              // which gate must answer
		want plan.Verdict        // its full verdict
		lift func(f *plan.Facts) // lifts that gate's trip for the next step
	}{{
		name: "config first, even with everything else tripped",
		want: plan.Verdict{Status: metav1.ConditionFalse, Reason: api.InvalidConfigurationReason, Message: cfgErr.Error()},
		lift: func(f *plan.Facts) { f.Options.Mode = plan.ModeDisabled },
	}, {
		name: "disabled next: a config error with mode disabled removes the condition",
		want: plan.Verdict{Remove: true},
		lift: func(f *plan.Facts) { f.Options.Mode, f.ConfigErr = plan.ModeEnabled, nil },
	}, {
		name: "suspended next: silent",
		want: plan.Verdict{Silent: true},
		lift: func(f *plan.Facts) { f.Suspended = false },
	}, {
		name: "Helm in flight next, before the release gate",
		want: plan.Verdict{Status: metav1.ConditionUnknown, Reason: api.ReleaseInProgressReason,
			Message: "waiting: Helm is acting on the release: v4 is pending-upgrade in storage"},
		lift: func(f *plan.Facts) { f.Stored = []plan.StoredRelease{{Version: 3, Status: "deployed"}} },
	}, {
		name: "release error next",
		want: plan.Verdict{Status: metav1.ConditionUnknown, Reason: api.ReleaseUnavailableReason, Message: relErr.Error()},
		lift: func(f *plan.Facts) { f.ReleaseErr = nil },
	}, {
		name: "release status next",
		want: plan.Verdict{Status: metav1.ConditionUnknown, Reason: api.ReleaseUnavailableReason, Message: "waiting: stored release is uninstalled"},
		lift: func(f *plan.Facts) { f.ReleaseStatus = "deployed" },
	}, {
		name: "rotate undone by Helm next: once the release is read, before the waits on the live world",
		want: rotateUndone,
		lift: func(f *plan.Facts) { f.Options.Strategy = plan.StrategyAuto },
	}, {
		name: "missing or deleting Clusters next",
		want: plan.Verdict{Status: metav1.ConditionUnknown, Reason: api.ClusterUnavailableReason,
			Message: "waiting: Cluster fleet/gone does not exist; Cluster fleet/going is being deleted"},
		lift: func(f *plan.Facts) { f.MissingClusters, f.DeletingClusters = nil, nil },
	}, {
		name: "paused clusters next",
		want: plan.Verdict{Status: metav1.ConditionUnknown, Reason: api.ClusterPausedReason, Message: "waiting: Cluster fleet/a, fleet/b is paused"},
		lift: func(f *plan.Facts) { f.PausedClusters = nil },
	}, {
		name: "paused templates and consumers last",
		want: plan.Verdict{Status: metav1.ConditionUnknown, Reason: api.ClusterPausedReason, Message: "waiting: Metal3MachineTemplate fleet/x is paused"},
		lift: func(f *plan.Facts) { f.PausedObjects = nil },
	}}
	g := NewWithT(t)
	g.Expect(rotateUndone.Reason).To(Equal(api.InvalidConfigurationReason))
	g.Expect(steps).To(HaveLen(len(plan.Gates)+1), "one step per gate, two for the release (error, then status)")
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			g := NewWithT(t)
			v, stop := plan.Evaluate(f, plan.Gates)
			g.Expect(stop).To(BeTrue())
			g.Expect(v).To(Equal(st.want))
		})
		st.lift(&f)
	}
	t.Run("nothing tripped: no stop", func(t *testing.T) {
		g := NewWithT(t)
		v, stop := plan.Evaluate(f, plan.Gates)
		g.Expect(stop).To(BeFalse())
		g.Expect(v).To(Equal(plan.Verdict{}))
	})
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

// TestGateHelmInFlight: storage that holds a pending release, or a version
// newer than status.history names, waits; a failed or deployed release
// with nothing newer passes, so a failed release is still healed.
func TestGateHelmInFlight(t *testing.T) {
	type st = plan.StoredRelease
	cases := []struct {
		name    string // what the case proves
		history int    // version status.history names; 0 for none
		stored  []st   // storage, in any order
		wantMsg string // the verdict's message; "" when the gate passes
	}{
		{name: "deployed, named by history, passes", history: 1, stored: []st{{1, "deployed"}}},
		{name: "failed with nothing pending passes", history: 2, stored: []st{{2, "failed"}, {1, "superseded"}}},
		{name: "nothing stored passes (the release gate reports it)", history: 1},
		{name: "no history and nothing pending passes", stored: []st{{3, "deployed"}}},
		{name: "older versions only: history ahead of storage passes", history: 4, stored: []st{{3, "deployed"}}},
		{name: "an older version left pending, then rolled back past, passes", history: 4, stored: []st{{3, "pending-upgrade"}, {4, "deployed"}, {2, "superseded"}}},
		{
			name: "pending upgrade, history still on the old release", history: 1, stored: []st{{1, "deployed"}, {2, "pending-upgrade"}},
			wantMsg: "waiting: Helm is acting on the release: v2 is pending-upgrade in storage",
		},
		{
			name: "first install: no history, pending-install", stored: []st{{1, "pending-install"}},
			wantMsg: "waiting: Helm is acting on the release: v1 is pending-install in storage",
		},
		{
			name: "remediation: rollback of a failed upgrade", history: 2, stored: []st{{3, "pending-rollback"}, {2, "failed"}, {1, "superseded"}},
			wantMsg: "waiting: Helm is acting on the release: v3 is pending-rollback in storage",
		},
		{
			name: "a pending release named by history still waits", history: 2, stored: []st{{2, "pending-upgrade"}},
			wantMsg: "waiting: Helm is acting on the release: v2 is pending-upgrade in storage",
		},
		{
			name: "the newest pending one is named, whatever the order", history: 1, stored: []st{{2, "pending-upgrade"}, {4, "pending-rollback"}, {1, "deployed"}},
			wantMsg: "waiting: Helm is acting on the release: v4 is pending-rollback in storage",
		},
		{
			name: "Helm done, history not written yet", history: 1, stored: []st{{1, "superseded"}, {2, "deployed"}},
			wantMsg: "waiting: Helm is acting on the release: storage holds v2 (deployed), newer than v1 in status.history",
		},
		{
			name: "an upgrade that failed, history not written yet", history: 1, stored: []st{{2, "failed"}, {1, "deployed"}},
			wantMsg: "waiting: Helm is acting on the release: storage holds v2 (failed), newer than v1 in status.history",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			f := plan.Facts{Options: plan.Options{Mode: plan.ModeEnabled}, HistoryVersion: tc.history, Stored: tc.stored, ReleaseStatus: "deployed"}
			v, stop := plan.GateHelmInFlight(f)
			g.Expect(stop).To(Equal(tc.wantMsg != ""))
			if tc.wantMsg == "" {
				g.Expect(v).To(Equal(plan.Verdict{}))
				return
			}
			g.Expect(v).To(Equal(plan.Verdict{Status: metav1.ConditionUnknown, Reason: api.ReleaseInProgressReason, Message: tc.wantMsg}))
		})
	}
}

func TestSingleGates(t *testing.T) {
	cfgErr := errors.New("bad")
	rotate := plan.Options{Mode: plan.ModeEnabled, Strategy: plan.StrategyRotate}
	unknown := func(reason, msg string) plan.Verdict {
		return plan.Verdict{Status: metav1.ConditionUnknown, Reason: reason, Message: msg}
	}
	invalid := func(msg string) plan.Verdict {
		return plan.Verdict{Status: metav1.ConditionFalse, Reason: api.InvalidConfigurationReason,
			Message: `invalid configuration: annotation templatedrift.io/strategy="rotate" cannot work with this release: ` + msg}
	}
	const ssaWhy = "the release is applied with server-side apply, so Helm sets every repointed reference back on each upgrade"
	const driftWhy = "helm-controller drift detection is enabled, so it sets every repointed reference back when it corrects drift"
	const ssaOut = "upgrade with client-side apply (spec.upgrade.serverSideApply: disabled)"
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
		{name: "rotate undone: rotate with csa passes", gate: plan.GateRotateUndone, facts: plan.Facts{Options: rotate, Helm: plan.HelmFacts{ApplyMethod: "csa"}}},
		{name: "rotate undone: rotate on a Helm 3 release passes", gate: plan.GateRotateUndone, facts: plan.Facts{Options: rotate}},
		{
			name: "rotate undone: auto with ssa passes (it picks recreate)", gate: plan.GateRotateUndone,
			facts: plan.Facts{Options: plan.Options{Mode: plan.ModeEnabled, Strategy: plan.StrategyAuto}, Helm: plan.HelmFacts{ApplyMethod: "ssa", DriftDetectionEnabled: true}},
		},
		{
			name: "rotate undone: recreate with ssa passes", gate: plan.GateRotateUndone,
			facts: plan.Facts{Options: plan.Options{Mode: plan.ModeEnabled, Strategy: plan.StrategyRecreate}, Helm: plan.HelmFacts{ApplyMethod: "ssa"}},
		},
		{
			name: "rotate undone: rotate with ssa is refused", gate: plan.GateRotateUndone, wantStop: true,
			facts: plan.Facts{Options: rotate, Helm: plan.HelmFacts{ApplyMethod: "ssa"}},
			want:  invalid(ssaWhy + ", and each flip rolls machines; use strategy auto (which recreates a locked template nothing uses, and reports CorrectionBlocked for one in use), or " + ssaOut),
		},
		{
			name: "rotate undone: rotate with drift detection enabled is refused", gate: plan.GateRotateUndone, wantStop: true,
			facts: plan.Facts{Options: plan.Options{Mode: plan.ModeWarn, Strategy: plan.StrategyRotate}, Helm: plan.HelmFacts{ApplyMethod: "csa", DriftDetectionEnabled: true}},
			want:  invalid(driftWhy + ", and each flip rolls machines; use strategy auto (which recreates a locked template nothing uses, and reports CorrectionBlocked for one in use), or set spec.driftDetection.mode to warn"),
		},
		{
			name: "rotate undone: both causes, both ways out", gate: plan.GateRotateUndone, wantStop: true,
			facts: plan.Facts{Options: rotate, Helm: plan.HelmFacts{ApplyMethod: "ssa", DriftDetectionEnabled: true}},
			want:  invalid(ssaWhy + "; " + driftWhy + ", and each flip rolls machines; use strategy auto (which recreates a locked template nothing uses, and reports CorrectionBlocked for one in use), or " + ssaOut + " and set spec.driftDetection.mode to warn"),
		},
		{name: "cluster unavailable: every Cluster live passes", gate: plan.GateClusterUnavailable, facts: plan.Facts{MissingClusters: []string{}}},
		{
			name: "cluster unavailable: missing ones, sorted", gate: plan.GateClusterUnavailable, wantStop: true,
			facts: plan.Facts{MissingClusters: []string{"fleet/b", "fleet/a"}},
			want:  unknown(api.ClusterUnavailableReason, "waiting: Cluster fleet/a does not exist; Cluster fleet/b does not exist"),
		},
		{
			name: "cluster unavailable: one being deleted", gate: plan.GateClusterUnavailable, wantStop: true,
			facts: plan.Facts{DeletingClusters: []string{"fleet/a"}},
			want:  unknown(api.ClusterUnavailableReason, "waiting: Cluster fleet/a is being deleted"),
		},
		{name: "object paused: none passes", gate: plan.GateObjectPaused, facts: plan.Facts{PausedClusters: []string{"fleet/a"}}},
		{
			name: "object paused: names every paused object, sorted", gate: plan.GateObjectPaused, wantStop: true,
			facts: plan.Facts{PausedObjects: []string{"MachineDeployment fleet/md", "Metal3MachineTemplate fleet/x"}},
			want:  unknown(api.ClusterPausedReason, "waiting: MachineDeployment fleet/md, Metal3MachineTemplate fleet/x is paused"),
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			before := slices.Clone(tc.facts.MissingClusters)
			v, stop := tc.gate(tc.facts)
			g.Expect(stop).To(Equal(tc.wantStop))
			g.Expect(v).To(Equal(tc.want))
			g.Expect(tc.facts.MissingClusters).To(Equal(before), "the gathered list must not be reordered in place")
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
		name:        "Helm in flight: object gates pass, full chain waits",
		facts:       plan.Facts{Options: enabled, ReleaseStatus: "deployed", HistoryVersion: 1, Stored: []plan.StoredRelease{{Version: 2, Status: "pending-upgrade"}}},
		gatesReason: api.ReleaseInProgressReason,
	}, {
		name:        "missing Cluster: object gates pass, full chain waits",
		facts:       plan.Facts{Options: enabled, ReleaseStatus: "deployed", MissingClusters: []string{"fleet/a"}},
		gatesReason: api.ClusterUnavailableReason,
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
				lv, lstop := plan.Evaluate(tc.facts, plan.LiveGates)
				g.Expect(lstop).To(Equal(gstop), "the live gates stop where the whole chain does, once the object gates passed")
				g.Expect(lv).To(Equal(gv))
			}
		})
	}
	g := NewWithT(t)
	g.Expect(plan.ObjectGates).To(HaveLen(3))
	g.Expect(plan.Gates).To(HaveLen(9))
	v, stop := plan.Evaluate(plan.Facts{}, nil)
	g.Expect(stop).To(BeFalse(), "no gates, no stop")
	g.Expect(v).To(Equal(plan.Verdict{}))
}
