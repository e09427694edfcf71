package chaos

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
)

func TestPrintMatrix(t *testing.T) {
	g := NewWithT(t)
	ok := Result{Scenario: ScenarioKill, N: 3, Fault: "2 SIGKILLs", InSyncWhenFaultsStopped: 1, ConvergeSeconds: 3.25, TotalSeconds: 31,
		Requests: 100, Writes: 9, PeakRSSBytes: 50 << 20, Checked: Invariants, Violations: map[string][]string{}}
	bad := Result{Scenario: ScenarioRace, N: 3, Fault: "20s of set-backs", OtherWrites: 4, Corrections: 7, Checked: append(Invariants, InvNoLoop),
		Violations: map[string][]string{InvConverged: {"not converged"}, InvNoLoop: {"a", "b"}}}
	g.Expect(ok.Held()).To(BeTrue())
	g.Expect(bad.Held()).To(BeFalse())
	var b strings.Builder
	PrintMatrix(&b, []Result{ok, bad})
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	g.Expect(lines).To(HaveLen(6))
	g.Expect(strings.Fields(lines[1])).To(Equal([]string{"kill", "3", "2", "SIGKILLs", "5/5", "1/3", "3.2s", "31s", "100", "9", "-", "50", "MiB"}))
	g.Expect(lines[2]).To(ContainSubstring("4/6 (failed: converged, no-loop)"))
	g.Expect(lines[2]).To(ContainSubstring("4 / 7"))
	g.Expect(lines[3:]).To(Equal([]string{"race: converged: not converged", "race: no-loop: a", "race: no-loop: b"}))
	g.Expect(sortedKeys(map[string]int{"b": 1, "a": 2})).To(Equal([]string{"a", "b"}))
}
