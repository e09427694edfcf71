package scale

import (
	"bytes"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
)

func TestCompare(t *testing.T) {
	g := NewWithT(t)
	ms := func(v float64) *float64 { return &v }
	runs := []Result{
		{Controller: TemplateDriftController, N: 100, RequestsPerHRPerResync: 0.5, Requests: Requests{Total: 100}, Reconciles: 200,
			ControllerCPUPerReconcileMs: ms(2), APIServerCPUPerReconcileMs: ms(4)},
		// helm-controller fell behind: half the reconciles, 21 requests each.
		{Controller: HelmController, N: 100, RequestsPerHRPerResync: 21, Requests: Requests{Total: 2100}, Reconciles: 100,
			ControllerCPUPerReconcileMs: ms(30), APIServerCPUPerReconcileMs: ms(12)},
		// The add-on made no request: no ratio, which meets the target.
		{Controller: TemplateDriftController, N: 300, RequestsPerHRPerResync: 0, ControllerCPUPerReconcileMs: ms(3), APIServerCPUPerReconcileMs: nil},
		{Controller: HelmController, N: 300, RequestsPerHRPerResync: 21, ControllerCPUPerReconcileMs: ms(30), APIServerCPUPerReconcileMs: ms(12)},
		// helm-controller not measured at 1000: no comparison.
		{Controller: TemplateDriftController, N: 1000, RequestsPerHRPerResync: 1},
	}

	got := Compare(runs)

	g.Expect(got).To(HaveLen(2))
	g.Expect(got[0].N).To(Equal(100))
	g.Expect(*got[0].Requests).To(BeNumerically("~", 42, 1e-9))
	g.Expect(*got[0].RequestsPerReconcile).To(BeNumerically("~", 42, 1e-9), "21 a pass against 0.5")
	g.Expect(*got[0].ControllerCPU).To(BeNumerically("~", 15, 1e-9))
	g.Expect(*got[0].APIServerCPU).To(BeNumerically("~", 3, 1e-9))
	g.Expect(got[1].Requests).To(BeNil())
	g.Expect(got[1].APIServerCPU).To(BeNil())
	var out bytes.Buffer
	g.Expect(WriteComparisons(&out, got)).To(Succeed())
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	g.Expect(lines).To(HaveLen(3))
	g.Expect(lines[1]).To(MatchRegexp(`^100\s+42\.0× \(≥10×: met\)\s+42\.0× \(≥10×: met\)\s+15\.0× \(≥5×: met\)\s+3\.0× \(≥5×: missed\)$`))
	g.Expect(lines[2]).To(MatchRegexp(`^300\s+∞ \(≥10×: met\)\s+∞ \(≥10×: met\)\s+10\.0× \(≥5×: met\)\s+∞`))
}

func TestWriteComparisonsWithoutHelmController(t *testing.T) {
	g := NewWithT(t)
	var out bytes.Buffer

	g.Expect(WriteComparisons(&out, Compare([]Result{{Controller: TemplateDriftController, N: 50}}))).To(Succeed())

	g.Expect(out.String()).To(BeEmpty())
}
