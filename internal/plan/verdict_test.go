package plan_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/plan"
)

func TestErrorVerdict(t *testing.T) {
	invalid := fmt.Errorf("%w: annotation templatedrift.io/strategy=\"x\"", plan.ErrInvalidConfiguration)
	crossNS := fmt.Errorf("failed to read release fleet/cluster-a.v3: %w",
		fmt.Errorf("%w: MachineDeployment fleet/md-0 names namespace \"tenant-b\"", manifest.ErrCrossNamespaceRef))
	target := fmt.Errorf("%w: secret fleet/kubeconfig not found", plan.ErrTargetUnavailable)
	forbidden := fmt.Errorf("failed to get Cluster victim/mgmt: %w", apierrors.NewForbidden(
		schema.GroupResource{Group: "cluster.x-k8s.io", Resource: "clusters"}, "mgmt",
		errors.New(`User "system:serviceaccount:tenant:deployer" cannot get resource "clusters"`)))
	cases := []struct {
		name   string       // what the case proves
		err    error        // the error that stopped the pass
		want   plan.Verdict // the verdict
		wantOK bool         // the error is the release's or the user's
	}{{
		name:   "invalid configuration",
		err:    invalid,
		want:   plan.Verdict{Status: metav1.ConditionFalse, Reason: api.InvalidConfigurationReason, Message: invalid.Error()},
		wantOK: true,
	}, {
		name:   "a cross-namespace reference, wrapped twice, is invalid configuration",
		err:    crossNS,
		want:   plan.Verdict{Status: metav1.ConditionFalse, Reason: api.InvalidConfigurationReason, Message: crossNS.Error()},
		wantOK: true,
	}, {
		name:   "an unreachable target, wrapped, waits as ReleaseUnavailable",
		err:    fmt.Errorf("pass: %w", target),
		want:   plan.Verdict{Status: metav1.ConditionUnknown, Reason: api.ReleaseUnavailableReason, Message: "pass: " + target.Error()},
		wantOK: true,
	}, {
		name:   "a refusal of the identity's rights, wrapped, is AccessDenied",
		err:    forbidden,
		want:   plan.Verdict{Status: metav1.ConditionFalse, Reason: api.AccessDeniedReason, Message: forbidden.Error()},
		wantOK: true,
	}, {
		name: "any other error fails the pass",
		err:  errors.New("connection refused"),
	}, {
		name: "a context error fails the pass",
		err:  fmt.Errorf("list clusters: %w", context.DeadlineExceeded),
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			v, ok := plan.ErrorVerdict(tc.err)
			g.Expect(ok).To(Equal(tc.wantOK))
			g.Expect(v).To(Equal(tc.want))
		})
	}
}

// TestRecordStorageError: the error lands in the fact its gate reads, and
// the gate chain answers with the matching verdict.
func TestRecordStorageError(t *testing.T) {
	crossNS := fmt.Errorf("release fleet/cluster-a.v3: %w", manifest.ErrCrossNamespaceRef)
	corrupt := errors.New("release fleet/cluster-a.v3: history digest mismatch")
	unauthorized := fmt.Errorf("failed to list Helm storage: %w", apierrors.NewUnauthorized("token expired"))
	cases := []struct {
		name          string       // what the case proves
		mode          plan.Mode    // the release's mode
		err           error        // the error met reading the stored release
		wantConfigErr error        // Facts.ConfigErr afterwards
		wantRelErr    error        // Facts.ReleaseErr afterwards
		want          plan.Verdict // the verdict of the gate chain
	}{{
		name:          "a cross-namespace reference is the user's configuration",
		mode:          plan.ModeEnabled,
		err:           crossNS,
		wantConfigErr: crossNS,
		want:          plan.Verdict{Status: metav1.ConditionFalse, Reason: api.InvalidConfigurationReason, Message: crossNS.Error()},
	}, {
		name:          "a cross-namespace reference of a disabled release still removes the condition",
		mode:          plan.ModeDisabled,
		err:           crossNS,
		wantConfigErr: crossNS,
		want:          plan.Verdict{Remove: true},
	}, {
		name:       "any other error makes the release unusable",
		mode:       plan.ModeWarn,
		err:        corrupt,
		wantRelErr: corrupt,
		want:       plan.Verdict{Status: metav1.ConditionUnknown, Reason: api.ReleaseUnavailableReason, Message: corrupt.Error()},
	}, {
		name:       "a list of storage the identity may not make (401) makes it unusable too, as a read refused does",
		mode:       plan.ModeEnabled,
		err:        unauthorized,
		wantRelErr: unauthorized,
		want:       plan.Verdict{Status: metav1.ConditionUnknown, Reason: api.ReleaseUnavailableReason, Message: unauthorized.Error()},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			f := plan.Facts{Options: plan.Options{Mode: tc.mode, Strategy: plan.StrategyAuto}, ReleaseStatus: "deployed"}
			g.Expect(f.RecordStorageError(tc.err)).To(Succeed())
			g.Expect(f.ConfigErr).To(sameError(tc.wantConfigErr))
			g.Expect(f.ReleaseErr).To(sameError(tc.wantRelErr))
			v, stop := plan.Evaluate(f, plan.Gates)
			g.Expect(stop).To(BeTrue())
			g.Expect(v).To(Equal(tc.want))
		})
	}
}

// sameError matches err itself, or nil when err is nil.
func sameError(err error) OmegaMatcher {
	if err == nil {
		return BeNil()
	}
	return BeIdenticalTo(err)
}
