package chaos

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
)

func TestPrintMatrix(t *testing.T) {
	g := NewWithT(t)
	ok := Result{Scenario: ScenarioKill, N: 3, Fault: "2 SIGKILLs", InSyncWhenFaultsStopped: 1, ConvergeSeconds: 3.25, TotalSeconds: 31,
		Requests: 100, Writes: 9, Drifts: &DriftFigures{OtherWrites: 5, Corrections: 6}, PeakRSSBytes: 50 << 20, Checked: Invariants, Violations: map[string][]string{}}
	bad := Result{Scenario: ScenarioRace, N: 3, Fault: "20s of set-backs", Drifts: &DriftFigures{OtherWrites: 4, Corrections: 7}, Checked: append(Invariants, InvNoLoop),
		Violations: map[string][]string{InvConverged: {"not converged"}, InvNoLoop: {"a", "b"}}}
	failover := Result{Scenario: ScenarioFailover, N: 3, Fault: "SIGKILL", InSyncWhenFaultsStopped: 2, ConvergeSeconds: 12, TotalSeconds: 40,
		Takeover: &Takeover{AfterKillSeconds: 13.44, LeaseSeconds: 15}, Checked: append(Invariants, InvTakeover, InvNoDoubleWrite), Violations: map[string][]string{}}
	faultFree := Result{Scenario: ScenarioLossy, N: 3, Fault: "none", Requests: 100, Proxy: &ProxyCounts{Requests: 101}, Checked: Invariants,
		Violations: map[string][]string{InvUnique: {"two replacements"}}}
	lossy := Result{Scenario: ScenarioLossy, N: 3, Fault: "5%", Requests: 130, Proxy: &ProxyCounts{Requests: 150}, FaultFree: &faultFree,
		Checked: append(Invariants, InvNoDoubleWrite, InvNoRetryStorm), Violations: map[string][]string{}}
	memory := Result{Scenario: ScenarioMemory, N: 7, Fault: "rewrites", InSyncWhenFaultsStopped: 7, PeakRSSBytes: 90 << 20, Checked: append(Invariants, InvBoundedMemory),
		Violations: map[string][]string{}, Memory: &MemoryFigures{Rewrites: 4000, ClientsBuilt: 1200, LimitBytes: 1 << 30,
			Before: MemoryPoint{RSSBytes: 60 << 20, HeapInuseBytes: 20 << 20, Goroutines: 200}, After: MemoryPoint{RSSBytes: 80 << 20, HeapInuseBytes: 22 << 20, Goroutines: 210}}}
	g.Expect(ok.Held()).To(BeTrue())
	g.Expect(bad.Held()).To(BeFalse())
	g.Expect(lossy.Held()).To(BeFalse(), "its fault-free run's invariants failed")
	var b strings.Builder
	PrintMatrix(&b, []Result{ok, bad, failover, lossy, memory})
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	g.Expect(lines).To(HaveLen(11))
	g.Expect(lines[0]).To(HaveSuffix("peak RSS  memory before → after"))
	g.Expect(strings.Fields(lines[1])).To(Equal([]string{"kill", "3", "2", "SIGKILLs", "5/5", "1/3", "3.2s", "31s", "100", "9", "5", "/", "6", "-", "-", "50", "MiB", "-"}))
	g.Expect(lines[2]).To(ContainSubstring("4/6 (failed: converged, no-loop)"))
	g.Expect(lines[2]).To(ContainSubstring("4 / 7"))
	g.Expect(strings.Fields(lines[3])).To(Equal([]string{"failover", "3", "SIGKILL", "7/7", "2/3", "12s", "40s", "0", "0", "-", "13s", "/", "15s", "-", "0", "MiB", "-"}))
	g.Expect(strings.Fields(lines[4])).To(Equal([]string{"lossy", "(fault-free)", "3", "none", "4/5", "(failed:", "unique)", "-", "0.0s", "0.0s", "100", "0", "-", "-", "-", "0", "MiB", "-"}))
	g.Expect(strings.Fields(lines[5])).To(Equal([]string{"lossy", "3", "5%", "7/7", "-", "0.0s", "0.0s", "130", "0", "-", "-", "1.30×", "(proxy", "1.49×)", "0", "MiB", "-"}))
	g.Expect(strings.Join(strings.Fields(lines[6]), " ")).To(Equal("memory 7 rewrites 6/6 7/7 0.0s 0.0s 0 0 - - - 90 MiB " +
		"RSS 60 → 80 MiB, heap 20 → 22 MiB, goroutines 200 → 210; 1200 clients for 4000 rewrites; bound 512 MiB"))
	g.Expect(lines[7:]).To(Equal([]string{"race: converged: not converged", "race: no-loop: a", "race: no-loop: b", "lossy (fault-free): unique: two replacements"}))
	g.Expect(sortedKeys(map[string]int{"b": 1, "a": 2})).To(Equal([]string{"a", "b"}))
}
