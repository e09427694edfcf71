package scale

import (
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/templatedrift/template-drift-controller/api"
)

// hrWith returns a HelmRelease at generation gen, observed at observed,
// with conds.
func hrWith(gen, observed int64, conds ...metav1.Condition) helmv2.HelmRelease {
	hr := helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Namespace: "fleet-0000", Name: releaseName, Generation: gen}}
	hr.Status.ObservedGeneration = observed
	hr.Status.Conditions = conds
	return hr
}

func cond(typ string, status metav1.ConditionStatus, reason string, gen int64) metav1.Condition {
	return metav1.Condition{Type: typ, Status: status, Reason: reason, ObservedGeneration: gen}
}

func withMessage(c metav1.Condition, msg string) metav1.Condition {
	c.Message = msg
	return c
}

func TestNotReconciled(t *testing.T) {
	tests := []struct {
		name string
		// hr is the one HelmRelease listed.
		hr helmv2.HelmRelease
		// want is the count by reason; empty when it has converged.
		want map[string]int
	}{
		{name: "ready at its generation", hr: hrWith(2, 2, cond("Ready", metav1.ConditionTrue, "InstallSucceeded", 2)), want: map[string]int{}},
		{name: "warn mode not observed yet", hr: hrWith(2, 1, cond("Ready", metav1.ConditionTrue, "InstallSucceeded", 1)), want: map[string]int{"generation": 1}},
		{name: "an upgrade in flight", hr: hrWith(2, 2, cond("Ready", metav1.ConditionTrue, "InstallSucceeded", 2),
			withMessage(cond("Reconciling", metav1.ConditionTrue, "Progressing", 2), "Running 'upgrade' action with timeout of 5m0s")),
			want: map[string]int{"release action": 1}},
		{name: "a pass in flight, no action", hr: hrWith(2, 2, cond("Ready", metav1.ConditionTrue, "InstallSucceeded", 2),
			withMessage(cond("Reconciling", metav1.ConditionTrue, "Progressing", 2), "Fulfilling prerequisites")),
			want: map[string]int{}},
		{name: "no Ready", hr: hrWith(1, 1), want: map[string]int{"none": 1}},
		{name: "not ready", hr: hrWith(2, 2, cond("Ready", metav1.ConditionFalse, "ArtifactFailed", 2)), want: map[string]int{"ArtifactFailed": 1}},
		{name: "Ready of an older generation", hr: hrWith(2, 2, cond("Ready", metav1.ConditionTrue, "InstallSucceeded", 1)), want: map[string]int{"InstallSucceeded": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(notReconciled([]helmv2.HelmRelease{tt.hr})).To(Equal(tt.want))
		})
	}
}

func TestNotInSync(t *testing.T) {
	g := NewWithT(t)
	list := []helmv2.HelmRelease{
		hrWith(1, 1, cond(api.TemplatesInSyncCondition, metav1.ConditionTrue, api.DriftCorrectedReason, 1)),
		hrWith(1, 1),
		hrWith(1, 1, cond(api.TemplatesInSyncCondition, metav1.ConditionFalse, "Blocked", 1)),
	}

	g.Expect(notInSync(list)).To(Equal(map[string]int{"none": 1, "Blocked": 1}))
}

func TestUpgraded(t *testing.T) {
	g := NewWithT(t)
	installed, upgradedOne, none := hrWith(2, 2), hrWith(2, 2), hrWith(2, 2)
	installed.Status.History = helmv2.Snapshots{{Version: 1}}
	upgradedOne.Namespace = "fleet-0001"
	upgradedOne.Status.History = helmv2.Snapshots{{Version: 2}, {Version: 1}}
	none.Namespace = "fleet-0002"

	g.Expect(upgraded([]helmv2.HelmRelease{installed, upgradedOne, none})).To(Equal([]string{"fleet-0001/cluster", "fleet-0002/cluster"}))
}
