package controllers_test

import (
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/kustomize"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/templatedrift/template-drift-controller/api"
)

// TestLongReleaseNameIsShortenedAsHelmControllerDoes: with a target
// namespace the release is "<targetNamespace>-<name>", which helm-controller
// shortens above 53 characters; the add-on reads the release under the same
// shortened name.
func TestLongReleaseNameIsShortenedAsHelmControllerDoes(t *testing.T) {
	w := newWorld(t, scenario{annotations: enabled, live: bootstrap, release: mgmt, applyMethod: "csa", hrMutate: inOwnNamespace})
	w.g.Expect(len(w.ns + "-cluster")).To(BeNumerically(">", 53))
	w.g.Expect(len(w.rel.Name)).To(Equal(53))
	w.g.Expect(w.reconcile()).To(Equal(2))
	w.g.Expect(reasonOf(w.condition())).To(Equal(api.DriftCorrectedReason))
}

// TestInvalidIgnoreRule: an ignore rule whose selector does not compile is a
// configuration error, reported, with nothing written.
func TestInvalidIgnoreRule(t *testing.T) {
	w := newWorld(t, scenario{annotations: enabled, live: bootstrap, release: mgmt, hrMutate: func(hr *helmv2.HelmRelease) {
		hr.Spec.DriftDetection = &helmv2.DriftDetection{Ignore: []helmv2.IgnoreRule{{
			Paths: []string{"/spec"}, Target: &kustomize.Selector{Name: "([unclosed"}}}}
	}})
	expectUntouched(w)
	cond := w.condition()
	w.g.Expect(cond.Status).To(Equal(metav1.ConditionFalse))
	w.g.Expect(cond.Reason).To(Equal(api.InvalidConfigurationReason))
	w.g.Expect(cond.Message).To(ContainSubstring("spec.driftDetection.ignore"))
}

// TestUpgradeApplyMethod: auto looks at how Helm will apply the next
// upgrade: spec.upgrade.serverSideApply overrides the stored release's
// method when it is enabled or disabled.
func TestUpgradeApplyMethod(t *testing.T) {
	cases := []struct {
		name        string
		applyMethod string                     // stored release
		upgrade     helmv2.ServerSideApplyMode // spec.upgrade.serverSideApply
		rotated     bool                       // true: rotate; false: recreate, blocked by the template's users
	}{
		{name: "csa release, ssa upgrades", applyMethod: "csa", upgrade: helmv2.ServerSideApplyEnabled, rotated: false},
		{name: "ssa release, csa upgrades", applyMethod: "ssa", upgrade: helmv2.ServerSideApplyDisabled, rotated: true},
		{name: "ssa release, auto", applyMethod: "ssa", upgrade: helmv2.ServerSideApplyAuto, rotated: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, scenario{annotations: enabled, live: lockedLive, release: lockedRelease, applyMethod: tc.applyMethod,
				hrMutate: func(hr *helmv2.HelmRelease) { hr.Spec.Upgrade = &helmv2.Upgrade{ServerSideApply: tc.upgrade} }})
			w.reconcile()
			want := "LockedMachineTemplate/mgmt-cp: correction blocked"
			if tc.rotated {
				want = "LockedMachineTemplate/mgmt-cp: rotated to mgmt-cp-"
			}
			w.g.Expect(w.condition().Message).To(ContainSubstring(want))
		})
	}
}
