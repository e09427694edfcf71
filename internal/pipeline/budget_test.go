package pipeline

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/types"
)

// TestRolloutBudget: a budget of 1 gives its slot to the first release
// that claims it, keeps it while that release rolls out (and for the hold
// after the claim, whatever a pass reads), and gives it to the next one
// when the rollout ends or the HelmRelease goes.
func TestRolloutBudget(t *testing.T) {
	g := NewWithT(t)
	now := time.Date(2026, 12, 5, 9, 0, 0, 0, time.UTC)
	b := NewRolloutBudget(1)
	b.now = func() time.Time { return now }
	a, c := types.NamespacedName{Namespace: "fleet", Name: "a"}, types.NamespacedName{Namespace: "fleet", Name: "c"}

	g.Expect(b.Claim(a)).To(BeTrue())
	g.Expect(b.Claim(a)).To(BeTrue(), "a slot it holds")
	g.Expect(b.Claim(c)).To(BeFalse())
	b.Observe(a, false)
	g.Expect(b.Claim(c)).To(BeFalse(), "a pass right after the claim may not see the repoint yet")
	now = now.Add(DefaultBudgetHold)
	b.Observe(a, true)
	g.Expect(b.Claim(c)).To(BeFalse(), "rolling out")
	b.Observe(a, false)
	g.Expect(b.InProgress()).To(BeZero(), "the rollout ended")
	g.Expect(b.Claim(c)).To(BeTrue())
	b.Forget(c)
	g.Expect(b.Claim(a)).To(BeTrue(), "a HelmRelease gone frees its slot")

	g.Expect(NewRolloutBudget(0).Claim(a)).To(BeFalse(), "0: no rollout starts")
	g.Expect(NewRolloutBudget(-1).Claim(a)).To(BeTrue(), "negative: no limit")
	var none *RolloutBudget
	g.Expect(none.Claim(a)).To(BeTrue(), "nil: no limit")
}
