package scale

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/templatedrift/template-drift-controller/test/harness"
)

// TestParseGoMemory: the breakdown comes from the Go collector's gauges,
// exponents and comments included; the heap retained is idle minus
// released; a missing gauge is an error, not a zero.
func TestParseGoMemory(t *testing.T) {
	g := NewWithT(t)
	text := `# HELP go_memstats_heap_inuse_bytes Number of heap bytes that are in use.
# TYPE go_memstats_heap_inuse_bytes gauge
go_memstats_heap_inuse_bytes 1.572864e+08
go_memstats_heap_idle_bytes 6.291456e+07
go_memstats_heap_released_bytes 2.097152e+07
go_memstats_next_gc_bytes 2.097152e+08
go_memstats_stack_inuse_bytes 2.097152e+06
go_memstats_sys_bytes 3.145728e+08
go_memstats_heap_objects 1.2e+06
`
	m, err := parseGoMemory(text)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(m).To(Equal(GoMemory{HeapInuse: 150 << 20, HeapRetained: 40 << 20, NextGC: 200 << 20, Stacks: 2 << 20, Sys: 300 << 20}))
	g.Expect(m.String()).To(Equal("heap in use 150 MiB, heap retained 40 MiB, stacks 2 MiB, next GC at 200 MiB, from the OS 300 MiB"))

	_, err = parseGoMemory("go_memstats_heap_inuse_bytes 1\n")
	g.Expect(err).To(MatchError(ContainSubstring("go_memstats_heap_idle_bytes")))
}

// TestWriteBreakdowns: each add-on run gets its line, with its floor and
// its memory's breakdown when measured; a run without a breakdown (helm-
// controller) gets none.
func TestWriteBreakdowns(t *testing.T) {
	g := NewWithT(t)
	addon := Result{N: 5000, Fleet: "full", Controller: "template-drift-controller", ConvergenceSeconds: 108,
		ConvergenceRequests: Requests{Total: 3}, Memory: harness.Memory{RSS: 292 << 20},
		Addon: &AddonFigures{Breakdown: Breakdown{Reconciles: 7019, ReconcileSeconds: 421, QueueSeconds: 9, CPUSeconds: 41},
			GoMemory: GoMemory{HeapInuse: 150 << 20, HeapRetained: 40 << 20, NextGC: 200 << 20, Stacks: 2 << 20, Sys: 300 << 20}}}
	var b strings.Builder
	WriteBreakdowns(&b, []Result{addon, {N: 1000, Controller: "helm-controller"}})
	g.Expect(strings.Count(b.String(), "\nN=")).To(Equal(1))
	g.Expect(b.String()).To(ContainSubstring("N=5000 full template-drift-controller: converged in 108s with 3 requests"))
	g.Expect(b.String()).To(ContainSubstring("; at the window's end RSS 292 MiB: heap in use 150 MiB, heap retained 40 MiB, stacks 2 MiB, next GC at 200 MiB, from the OS 300 MiB\n"))

	// With shards, the breakdown is the first shard's, beside its own RSS.
	addon.Memory, addon.Addon.ShardMemory = harness.Memory{RSS: 509 << 20}, []harness.Memory{{RSS: 127 << 20}, {RSS: 128 << 20}, {RSS: 126 << 20}, {RSS: 128 << 20}}
	b.Reset()
	WriteBreakdowns(&b, []Result{addon})
	g.Expect(b.String()).To(ContainSubstring("; at the window's end the first shard's RSS 127 MiB: heap in use 150 MiB"))
}

// TestFloorLimit: the summary says which rate limit the replay had.
func TestFloorLimit(t *testing.T) {
	g := NewWithT(t)
	g.Expect(Floor{QPS: 50, Burst: 300}.limit()).To(Equal("QPS 50, burst 300"))
	g.Expect(Floor{QPS: 50, Burst: 300, Unlimited: true}.limit()).To(Equal("no client rate limit: API Priority and Fairness"))
}
