package plan_test

import (
	"errors"
	"fmt"
	"io"
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/templatedrift/template-drift-controller/internal/plan"
)

// choice is one expected answer of Choose.
type choice struct {
	strategy plan.Strategy // strategy picked ("" when none)
	ok       bool          // a strategy can be used
}

var (
	inPlace  = choice{plan.StrategyInPlace, true}
	rotate   = choice{plan.StrategyRotate, true}
	recreate = choice{plan.StrategyRecreate, true}
	none     = choice{"", false}
	refused  = choice{plan.StrategyInPlace, false} // in-place asked, server refused
)

// helmColumns are the release facts every Choose row is checked against.
var helmColumns = []struct {
	name string         // column label
	helm plan.HelmFacts // the facts
}{
	{"csa", plan.HelmFacts{ApplyMethod: "csa"}},
	{"ssa", plan.HelmFacts{ApplyMethod: "ssa"}},
	{"csa+driftDetection", plan.HelmFacts{ApplyMethod: "csa", DriftDetectionEnabled: true}},
	{"helm3", plan.HelmFacts{ApplyMethod: ""}},
}

// TestChoose is the full table requested × dry-run × Helm facts.
func TestChoose(t *testing.T) {
	rows := []struct {
		requested plan.Strategy // the strategy annotation
		dry       plan.DryRun   // the server's answer to the in-place dry-run
		want      [4]choice     // expected per helmColumns: csa, ssa, csa+drift, helm3
	}{
		{plan.StrategyAuto, plan.DryRunNotRun, [4]choice{none, none, none, none}},
		{plan.StrategyAuto, plan.DryRunAccepted, [4]choice{inPlace, inPlace, inPlace, inPlace}},
		{plan.StrategyAuto, plan.DryRunLocked, [4]choice{rotate, recreate, recreate, rotate}},
		{plan.StrategyAuto, plan.DryRunFailed, [4]choice{none, none, none, none}},

		{plan.StrategyInPlace, plan.DryRunNotRun, [4]choice{refused, refused, refused, refused}},
		{plan.StrategyInPlace, plan.DryRunAccepted, [4]choice{inPlace, inPlace, inPlace, inPlace}},
		{plan.StrategyInPlace, plan.DryRunLocked, [4]choice{refused, refused, refused, refused}},
		{plan.StrategyInPlace, plan.DryRunFailed, [4]choice{refused, refused, refused, refused}},

		{plan.StrategyRotate, plan.DryRunNotRun, [4]choice{rotate, rotate, rotate, rotate}},
		{plan.StrategyRotate, plan.DryRunAccepted, [4]choice{rotate, rotate, rotate, rotate}},
		{plan.StrategyRotate, plan.DryRunLocked, [4]choice{rotate, rotate, rotate, rotate}},
		{plan.StrategyRotate, plan.DryRunFailed, [4]choice{rotate, rotate, rotate, rotate}},

		{plan.StrategyRecreate, plan.DryRunNotRun, [4]choice{recreate, recreate, recreate, recreate}},
		{plan.StrategyRecreate, plan.DryRunAccepted, [4]choice{recreate, recreate, recreate, recreate}},
		{plan.StrategyRecreate, plan.DryRunLocked, [4]choice{recreate, recreate, recreate, recreate}},
		{plan.StrategyRecreate, plan.DryRunFailed, [4]choice{recreate, recreate, recreate, recreate}},
	}
	for _, row := range rows {
		for i, col := range helmColumns {
			name := fmt.Sprintf("%s/%s/%s", row.requested, dryName(row.dry), col.name)
			t.Run(name, func(t *testing.T) {
				g := NewWithT(t)
				s, ok := plan.Choose(row.requested, row.dry, col.helm)
				g.Expect(choice{s, ok}).To(Equal(row.want[i]))
				in := plan.TemplateInput{Requested: row.requested, DryRun: row.dry, Helm: col.helm}
				g.Expect(plan.ReadsReplacement(in)).To(Equal(row.want[i] == rotate), "the replacement is read only for a rotation")
			})
		}
	}
}

func dryName(d plan.DryRun) string {
	if d == plan.DryRunNotRun {
		return "NotRun"
	}
	return string(d)
}

func TestHelmReassertsReferences(t *testing.T) {
	cases := []struct {
		name string         // what the case proves
		helm plan.HelmFacts // release facts
		want bool           // Helm sets a repointed reference back
	}{
		{name: "client-side apply", helm: plan.HelmFacts{ApplyMethod: "csa"}},
		{name: "Helm 3 release (no apply method)", helm: plan.HelmFacts{}},
		{name: "server-side apply", helm: plan.HelmFacts{ApplyMethod: "ssa"}, want: true},
		{name: "csa with drift detection", helm: plan.HelmFacts{ApplyMethod: "csa", DriftDetectionEnabled: true}, want: true},
		{name: "Helm 3 with drift detection", helm: plan.HelmFacts{DriftDetectionEnabled: true}, want: true},
		{name: "ssa with drift detection", helm: plan.HelmFacts{ApplyMethod: "ssa", DriftDetectionEnabled: true}, want: true},
		{name: "apply method is exact: SSA is not ssa", helm: plan.HelmFacts{ApplyMethod: "SSA"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			NewWithT(t).Expect(tc.helm.HelmReassertsReferences()).To(Equal(tc.want))
		})
	}
}

func TestNeedsDryRun(t *testing.T) {
	cases := []struct {
		requested plan.Strategy // strategy annotation
		want      bool          // the server must be asked first
	}{
		{plan.StrategyAuto, true},
		{plan.StrategyInPlace, true},
		{plan.StrategyRotate, false},
		{plan.StrategyRecreate, false},
	}
	for _, tc := range cases {
		t.Run(string(tc.requested), func(t *testing.T) {
			NewWithT(t).Expect(plan.NeedsDryRun(tc.requested)).To(Equal(tc.want))
		})
	}
}

// TestNeedsDryRunAgreesWithChoose: a strategy that skips the dry-run must be
// decidable without one, and one that needs it must not be decidable
// without one.
func TestNeedsDryRunAgreesWithChoose(t *testing.T) {
	for _, s := range []plan.Strategy{plan.StrategyAuto, plan.StrategyInPlace, plan.StrategyRotate, plan.StrategyRecreate} {
		for _, col := range helmColumns {
			_, ok := plan.Choose(s, plan.DryRunNotRun, col.helm)
			NewWithT(t).Expect(ok).To(Equal(!plan.NeedsDryRun(s)), "%s with %s", s, col.name)
		}
	}
}

func TestInPlaceDryRun(t *testing.T) {
	gk := schema.GroupKind{Group: "infrastructure.cluster.x-k8s.io", Kind: "Metal3DataTemplate"}
	gr := schema.GroupResource{Group: gk.Group, Resource: "metal3datatemplates"}
	cases := []struct {
		name  string
		err   error
		want  plan.DryRun
		retry bool
	}{
		{name: "accepted", want: plan.DryRunAccepted},
		{name: "refused as Invalid: locked", err: apierrors.NewInvalid(gk, "data", nil), want: plan.DryRunLocked},
		{name: "denied by a webhook or the identity's rights: failed", err: apierrors.NewForbidden(gr, "data", errors.New("denied")), want: plan.DryRunFailed},
		{name: "a bad request: failed", err: apierrors.NewBadRequest("cannot read the patch"), want: plan.DryRunFailed},
		{name: "a 500 (a webhook that cannot be called): retried, not a failed correction", err: apierrors.NewInternalError(errors.New(`failed calling webhook "validation.metal3.io"`)), retry: true},
		{name: "a 429: retried", err: apierrors.NewTooManyRequests("slow down", 1), retry: true},
		{name: "a timeout: retried", err: apierrors.NewTimeoutError("no answer", 1), retry: true},
		{name: "the template gone since it was read: retried from a fresh read", err: apierrors.NewNotFound(gr, "data"), retry: true},
		{name: "a lost connection: retried", err: fmt.Errorf("patch: %w", io.ErrUnexpectedEOF), retry: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			got, retry := plan.InPlaceDryRun(tc.err)
			g.Expect(retry).To(Equal(tc.retry))
			g.Expect(got).To(Equal(tc.want))
		})
	}
}
