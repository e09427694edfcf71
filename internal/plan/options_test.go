package plan_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	. "github.com/onsi/gomega"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/plan"
)

func TestParseOptions(t *testing.T) {
	cases := []struct {
		name        string            // what the case proves
		annotations map[string]string // the HelmRelease's annotations
		want        plan.Options      // Options returned, error or not
		wantErr     []string          // substrings of the error; nil means no error
	}{{
		name: "nil annotations: disabled, auto",
		want: plan.Options{Mode: plan.ModeDisabled, Strategy: plan.StrategyAuto, Prune: true},
	}, {
		name:        "unrelated annotations only: disabled, auto",
		annotations: map[string]string{"example.com/other": "enabled"},
		want:        plan.Options{Mode: plan.ModeDisabled, Strategy: plan.StrategyAuto, Prune: true},
	}, {
		name:        "mode enabled, strategy absent defaults to auto",
		annotations: map[string]string{api.ModeAnnotation: "enabled"},
		want:        plan.Options{Mode: plan.ModeEnabled, Strategy: plan.StrategyAuto, Prune: true},
	}, {
		name:        "mode warn",
		annotations: map[string]string{api.ModeAnnotation: "warn"},
		want:        plan.Options{Mode: plan.ModeWarn, Strategy: plan.StrategyAuto, Prune: true},
	}, {
		name:        "mode disabled written explicitly",
		annotations: map[string]string{api.ModeAnnotation: "disabled"},
		want:        plan.Options{Mode: plan.ModeDisabled, Strategy: plan.StrategyAuto, Prune: true},
	}, {
		name:        "strategy auto",
		annotations: map[string]string{api.ModeAnnotation: "enabled", api.StrategyAnnotation: "auto"},
		want:        plan.Options{Mode: plan.ModeEnabled, Strategy: plan.StrategyAuto, Prune: true},
	}, {
		name:        "strategy in-place",
		annotations: map[string]string{api.ModeAnnotation: "enabled", api.StrategyAnnotation: "in-place"},
		want:        plan.Options{Mode: plan.ModeEnabled, Strategy: plan.StrategyInPlace, Prune: true},
	}, {
		name:        "strategy rotate",
		annotations: map[string]string{api.ModeAnnotation: "warn", api.StrategyAnnotation: "rotate"},
		want:        plan.Options{Mode: plan.ModeWarn, Strategy: plan.StrategyRotate, Prune: true},
	}, {
		name:        "strategy recreate",
		annotations: map[string]string{api.ModeAnnotation: "enabled", api.StrategyAnnotation: "recreate"},
		want:        plan.Options{Mode: plan.ModeEnabled, Strategy: plan.StrategyRecreate, Prune: true},
	}, {
		name:        "invalid mode: error, and Mode carries the raw value",
		annotations: map[string]string{api.ModeAnnotation: "on"},
		want:        plan.Options{Mode: "on", Strategy: plan.StrategyAuto, Prune: true},
		wantErr:     []string{api.ModeAnnotation, `"on"`},
	}, {
		name:        "mode is case sensitive",
		annotations: map[string]string{api.ModeAnnotation: "Enabled"},
		want:        plan.Options{Mode: "Enabled", Strategy: plan.StrategyAuto, Prune: true},
		wantErr:     []string{api.ModeAnnotation, `"Enabled"`},
	}, {
		name:        "empty mode is invalid, not absent",
		annotations: map[string]string{api.ModeAnnotation: ""},
		want:        plan.Options{Mode: "", Strategy: plan.StrategyAuto, Prune: true},
		wantErr:     []string{api.ModeAnnotation, `""`},
	}, {
		name:        "invalid strategy with mode enabled",
		annotations: map[string]string{api.ModeAnnotation: "enabled", api.StrategyAnnotation: "blue-green"},
		want:        plan.Options{Mode: plan.ModeEnabled, Strategy: plan.StrategyAuto, Prune: true},
		wantErr:     []string{api.StrategyAnnotation, `"blue-green"`},
	}, {
		name:        "invalid strategy with mode disabled: error still returned",
		annotations: map[string]string{api.ModeAnnotation: "disabled", api.StrategyAnnotation: "blue-green"},
		want:        plan.Options{Mode: plan.ModeDisabled, Strategy: plan.StrategyAuto, Prune: true},
		wantErr:     []string{api.StrategyAnnotation, `"blue-green"`},
	}, {
		name:        "invalid strategy with mode absent: error still returned",
		annotations: map[string]string{api.StrategyAnnotation: "Rotate"},
		want:        plan.Options{Mode: plan.ModeDisabled, Strategy: plan.StrategyAuto, Prune: true},
		wantErr:     []string{api.StrategyAnnotation, `"Rotate"`},
	}, {
		name:        "prune disabled",
		annotations: map[string]string{api.ModeAnnotation: "enabled", api.PruneAnnotation: "disabled"},
		want:        plan.Options{Mode: plan.ModeEnabled, Strategy: plan.StrategyAuto, Prune: false},
	}, {
		name:        "prune enabled written explicitly",
		annotations: map[string]string{api.ModeAnnotation: "enabled", api.PruneAnnotation: "enabled"},
		want:        plan.Options{Mode: plan.ModeEnabled, Strategy: plan.StrategyAuto, Prune: true},
	}, {
		name:        "invalid prune value",
		annotations: map[string]string{api.ModeAnnotation: "enabled", api.PruneAnnotation: "off"},
		want:        plan.Options{Mode: plan.ModeEnabled, Strategy: plan.StrategyAuto, Prune: true},
		wantErr:     []string{api.PruneAnnotation, `"off"`},
	}, {
		name:        "rollouts allowed",
		annotations: map[string]string{api.ModeAnnotation: "enabled", api.RolloutsAnnotation: "allow"},
		want:        plan.Options{Mode: plan.ModeEnabled, Strategy: plan.StrategyAuto, Prune: true, Rollouts: plan.RolloutsAllow},
	}, {
		name:        "invalid rollout policy",
		annotations: map[string]string{api.ModeAnnotation: "enabled", api.RolloutsAnnotation: "ask"},
		want:        plan.Options{Mode: plan.ModeEnabled, Strategy: plan.StrategyAuto, Prune: true},
		wantErr:     []string{api.RolloutsAnnotation, `"ask"`},
	}, {
		name:        "empty rollout policy is invalid, not the default",
		annotations: map[string]string{api.ModeAnnotation: "enabled", api.RolloutsAnnotation: ""},
		want:        plan.Options{Mode: plan.ModeEnabled, Strategy: plan.StrategyAuto, Prune: true},
		wantErr:     []string{api.RolloutsAnnotation},
	}, {
		name:        "approvals split, trimmed, sorted, deduplicated",
		annotations: map[string]string{api.ModeAnnotation: "enabled", api.ApproveRolloutAnnotation: " b2, a1,,b2 "},
		want:        plan.Options{Mode: plan.ModeEnabled, Strategy: plan.StrategyAuto, Prune: true, Approved: []string{"a1", "b2"}},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			got, err := plan.ParseOptions(tc.annotations, plan.RolloutsDeny)
			if tc.want.Rollouts == "" {
				tc.want.Rollouts = plan.RolloutsDeny // the default given
			}
			g.Expect(got).To(Equal(tc.want))
			if tc.wantErr == nil {
				g.Expect(err).NotTo(HaveOccurred())
				return
			}
			g.Expect(err).To(MatchError(plan.ErrInvalidConfiguration))
			for _, s := range tc.wantErr {
				g.Expect(err.Error()).To(ContainSubstring(s))
			}
		})
	}
}

// TestParseOptionsGateConfig checks the contract between ParseOptions and
// GateConfig: a configuration error stops the pass with InvalidConfiguration
// unless the mode parsed as disabled, in which case the release is treated
// as opted out (the condition is removed, never reported invalid).
func TestParseOptionsGateConfig(t *testing.T) {
	cases := []struct {
		name        string                 // what the case proves
		annotations map[string]string      // the HelmRelease's annotations
		wantReason  string                 // Reason of the stopping verdict; "" when none
		wantStatus  metav1.ConditionStatus // Status of the stopping verdict
		wantRemove  bool                   // the verdict removes the condition
	}{{
		name:        "invalid mode stops with InvalidConfiguration",
		annotations: map[string]string{api.ModeAnnotation: "on"},
		wantReason:  api.InvalidConfigurationReason,
		wantStatus:  metav1.ConditionFalse,
	}, {
		name:        "invalid strategy with mode enabled stops with InvalidConfiguration",
		annotations: map[string]string{api.ModeAnnotation: "enabled", api.StrategyAnnotation: "x"},
		wantReason:  api.InvalidConfigurationReason,
		wantStatus:  metav1.ConditionFalse,
	}, {
		name:        "invalid strategy with mode warn stops with InvalidConfiguration",
		annotations: map[string]string{api.ModeAnnotation: "warn", api.StrategyAnnotation: "x"},
		wantReason:  api.InvalidConfigurationReason,
		wantStatus:  metav1.ConditionFalse,
	}, {
		name:        "invalid strategy with mode disabled is not reported: condition removed",
		annotations: map[string]string{api.ModeAnnotation: "disabled", api.StrategyAnnotation: "x"},
		wantRemove:  true,
	}, {
		name:        "invalid strategy with mode absent is not reported: condition removed",
		annotations: map[string]string{api.StrategyAnnotation: "x"},
		wantRemove:  true,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			opts, err := plan.ParseOptions(tc.annotations, plan.RolloutsDeny)
			g.Expect(err).To(MatchError(plan.ErrInvalidConfiguration))

			_, stop := plan.GateConfig(plan.Facts{Options: opts, ConfigErr: err})
			g.Expect(stop).To(Equal(tc.wantReason != ""), "GateConfig alone")

			v, stop := plan.Evaluate(plan.Facts{Options: opts, ConfigErr: err, ReleaseStatus: "deployed"}, plan.Gates)
			g.Expect(stop).To(BeTrue())
			g.Expect(v.Remove).To(Equal(tc.wantRemove))
			g.Expect(v.Reason).To(Equal(tc.wantReason))
			g.Expect(v.Status).To(Equal(tc.wantStatus))
			if tc.wantReason != "" {
				g.Expect(v.Message).To(Equal(err.Error()))
			}
		})
	}
}

// TestParseRolloutPolicy: the controller's --rollouts (and diff's and
// preview's): unset fails closed, to deny; anything but deny or allow is
// an error naming the value.
func TestParseRolloutPolicy(t *testing.T) {
	g := NewWithT(t)
	for in, want := range map[string]plan.RolloutPolicy{"": plan.RolloutsDeny, "deny": plan.RolloutsDeny, "allow": plan.RolloutsAllow} {
		got, err := plan.ParseRolloutPolicy(in)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(got).To(Equal(want), "%q", in)
	}
	_, err := plan.ParseRolloutPolicy("Allow")
	g.Expect(err).To(MatchError(plan.ErrInvalidConfiguration))
	g.Expect(err.Error()).To(ContainSubstring(`"Allow"`))
}
