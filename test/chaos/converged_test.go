package chaos

import (
	"strings"
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/templatedrift/template-drift-controller/api"
)

func hrWith(generation int64, conds ...metav1.Condition) helmv2.HelmRelease {
	hr := helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Generation: generation}}
	hr.Status.Conditions = conds
	return hr
}

func inSync(status metav1.ConditionStatus, reason, message string, generation int64) metav1.Condition {
	return metav1.Condition{Type: api.TemplatesInSyncCondition, Status: status, Reason: reason, Message: message, ObservedGeneration: generation}
}

func TestPending(t *testing.T) {
	g := NewWithT(t)
	list := []helmv2.HelmRelease{
		hrWith(1, inSync(metav1.ConditionTrue, api.DriftCorrectedReason, "", 1)),
		hrWith(1),
		hrWith(2, inSync(metav1.ConditionTrue, api.NoDriftDetectedReason, "", 1)),
		hrWith(1, inSync(metav1.ConditionFalse, api.CorrectionFailedReason, "the server does not keep the value", 1)),
		hrWith(1, inSync(metav1.ConditionFalse, api.CorrectionFailedReason, "conflict", 1)),
		hrWith(1, inSync(metav1.ConditionUnknown, api.DriftDetectedReason, "", 1)),
	}
	g.Expect(Pending(list, nil)).To(Equal(map[string]int{"none": 1, "stale": 1, api.CorrectionFailedReason: 2, api.DriftDetectedReason: 1}))
	loopGuard := func(_ *helmv2.HelmRelease, c *metav1.Condition) bool {
		return strings.Contains(c.Message, "does not keep")
	}
	g.Expect(Pending(list, loopGuard)).To(Equal(map[string]int{"none": 1, "stale": 1, api.CorrectionFailedReason: 1, api.DriftDetectedReason: 1}))
	g.Expect(Pending(list[:1], nil)).To(BeEmpty())
}

func TestOwnExits(t *testing.T) {
	g := NewWithT(t)
	log := strings.Join([]string{
		`{"level":"info","ts":"2026-12-01T15:22:33.800Z","logger":"setup","msg":"Starting manager","controller":"template-drift-controller"}`,
		`{"level":"error","ts":"2026-12-01T15:22:34.800Z","msg":"Controller stopped","error":"failed to review access to secrets.: an error on the server"}`,
		`{"level":"info","msg":"Correcting template in place","reason":"Controller stopped is only a word here"}`,
		`not JSON: Controller stopped`,
		``,
	}, "\n")
	g.Expect(OwnExits(log)).To(Equal([]string{"failed to review access to secrets.: an error on the server"}))
	g.Expect(OwnExits("")).To(BeEmpty())
}
