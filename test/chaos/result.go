package chaos

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// Result is one scenario's row of the matrix.
type Result struct {
	Scenario string `json:"scenario"`
	N        int    `json:"n"`
	// Fault says what was injected, and how often.
	Fault string `json:"fault"`
	// SetupSeconds is the fleet's creation.
	SetupSeconds float64 `json:"setupSeconds"`
	// InSyncWhenFaultsStopped counts the releases converged when the last
	// fault was over.
	InSyncWhenFaultsStopped int `json:"inSyncWhenFaultsStopped"`
	// ConvergeSeconds is from the end of the faults to every release
	// converged; TotalSeconds from the controller's first start.
	ConvergeSeconds float64 `json:"convergeSeconds"`
	TotalSeconds    float64 `json:"totalSeconds"`
	// Requests and Writes are the controller user's requests, and its
	// writes that are not dry-runs (refused ones included), over the whole
	// scenario, from the audit log.
	Requests int `json:"requests"`
	Writes   int `json:"writes"`
	// PeakRSSBytes is the largest peak RSS of the controller's processes.
	PeakRSSBytes int64 `json:"peakRssBytes"`
	// Drifts are the figures of a scenario where another writer changes
	// objects (race, kill, compact, soak).
	Drifts *DriftFigures `json:"drifts,omitempty"`
	// Takeover is the failover scenario's, as the Lease tells it.
	Takeover *Takeover `json:"takeover,omitempty"`
	// Tenants are the tenants scenario's figures.
	Tenants *TenantFigures `json:"tenants,omitempty"`
	// Proxy counts the lossy scenario's requests at the proxy, and its
	// faults; FaultFree is its run of the same fleet through the same proxy
	// without faults.
	Proxy     *ProxyCounts `json:"proxy,omitempty"`
	FaultFree *Result      `json:"faultFree,omitempty"`
	// Memory is the memory scenario's: its hostile input and the
	// controller's memory before and after it.
	Memory *MemoryFigures `json:"memory,omitempty"`
	// Soak is the soak's: heal times and the controller's trends.
	Soak *SoakFigures `json:"soak,omitempty"`
	// Managed is a scenario's run with the real managers: what they held
	// and made.
	Managed *ManagedFigures `json:"managed,omitempty"`
	// Checked are the invariants checked, Violations their breaches.
	Checked    []string            `json:"checked"`
	Violations map[string][]string `json:"violations,omitempty"`
}

// MemoryFigures are the memory scenario's figures.
type MemoryFigures struct {
	// Rewriters rewrote their kubeconfig Secrets Rewrites times in all;
	// ClientsBuilt counts the remote clients the controller built over the
	// run (its kubeconfig sanitizer's requests in the audit log).
	Rewriters    int `json:"rewriters"`
	Rewrites     int `json:"rewrites"`
	ClientsBuilt int `json:"clientsBuilt"`
	// Large releases were stored with large values and a hook, and
	// upgraded LargeRewrites times during the fault; LargeStoredBytes is
	// the largest data.release of their Secrets.
	Large            int `json:"large"`
	LargeRewrites    int `json:"largeRewrites"`
	LargeStoredBytes int `json:"largeStoredBytes"`
	// Before is the controller's memory once the fleet converged, before
	// the fault; After, once it converged again after it.
	Before MemoryPoint `json:"before"`
	After  MemoryPoint `json:"after"`
	// PeakSampledRSSBytes and PeakSockets are the largest RSS and count of
	// open sockets of Samples samples during the fault and the
	// convergence.
	PeakSampledRSSBytes int64 `json:"peakSampledRssBytes"`
	PeakSockets         int   `json:"peakSockets"`
	Samples             int   `json:"samples"`
	// LimitBytes is the chart's default memory limit; the peak RSS must
	// stay under half of it.
	LimitBytes int64 `json:"limitBytes"`
}

// MemoryPoint is the controller's memory at one point; 0 for what could not
// be read.
type MemoryPoint struct {
	RSSBytes int64 `json:"rssBytes"`
	// HeapInuseBytes is go_memstats_heap_inuse_bytes right after a
	// garbage collection: the live heap and its fragmentation.
	HeapInuseBytes int64 `json:"heapInuseBytes"`
	// HeapAllocBytes is go_memstats_heap_alloc_bytes then: the live heap.
	HeapAllocBytes int64 `json:"heapAllocBytes"`
	Goroutines     int   `json:"goroutines"`
	Sockets        int   `json:"sockets"`
}

func (r *Result) violate(inv, what string) {
	r.Violations[inv] = append(r.Violations[inv], what)
}

// Held reports whether every invariant checked held, in the fault-free
// run too.
func (r Result) Held() bool {
	return len(r.Violations) == 0 && (r.FaultFree == nil || r.FaultFree.Held())
}

// held is the matrix's invariants cell: "5/5", or the count and the
// invariants that failed.
func (r Result) held() string {
	n := len(r.Checked)
	var failed []string
	for _, inv := range r.Checked {
		if len(r.Violations[inv]) > 0 {
			failed = append(failed, inv)
		}
	}
	if len(failed) == 0 {
		return fmt.Sprintf("%d/%d", n, n)
	}
	return fmt.Sprintf("%d/%d (failed: %s)", n-len(failed), n, strings.Join(failed, ", "))
}

// faultFreeRow names the lossy scenario's fault-free run in the matrix.
const faultFreeRow = "lossy (fault-free)"

// rows are the matrix's rows: each result, the lossy scenario's fault-free
// run before it.
func rows(results []Result) []Result {
	var out []Result
	for _, r := range results {
		if r.FaultFree != nil {
			ff := *r.FaultFree
			ff.Scenario = faultFreeRow
			out = append(out, ff)
		}
		out = append(out, r)
	}
	return out
}

// PrintMatrix writes the matrix, one row per scenario (and the lossy
// scenario's fault-free run), then every violation.
func PrintMatrix(w io.Writer, results []Result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "scenario\tN\tfault\tinvariants held\tin sync when faults stopped\tconverge after faults\ttotal\trequests\twrites\t"+
		"other writer / corrections\ttakeover / lease\trequests / fault-free\tpeak RSS\tmemory before → after")
	for _, r := range rows(results) {
		race := "-"
		if d := r.Drifts; d != nil {
			race = fmt.Sprintf("%d / %d", d.OtherWrites, d.Corrections)
			if r.Scenario == ScenarioCompact {
				race += fmt.Sprintf(" (%d relists)", d.Relists)
			}
		}
		conv := "-"
		if r.ConvergeSeconds > 0 || r.Violations[InvConverged] == nil {
			conv = seconds(r.ConvergeSeconds)
		}
		inSync := fmt.Sprintf("%d/%d", r.InSyncWhenFaultsStopped, r.N)
		if r.Scenario == ScenarioLossy || r.Scenario == faultFreeRow {
			inSync = "-"
		}
		name := r.Scenario
		if r.Managed != nil {
			name += " (real managers)"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\t%d MiB\t%s\n", name, r.N, r.Fault, r.held(),
			inSync, conv, seconds(r.TotalSeconds), r.Requests, r.Writes, race, takeover(r), againstFaultFree(r), r.PeakRSSBytes>>20, memoryCell(r))
	}
	_ = tw.Flush()
	printManaged(w, results)
	printTenants(w, results)
	printSoak(w, results)
	for _, r := range rows(results) {
		for _, inv := range r.Checked {
			vs := r.Violations[inv]
			for i, v := range vs {
				if i == 10 {
					fmt.Fprintf(w, "%s: %s: ... and %d more\n", r.Scenario, inv, len(vs)-10)
					break
				}
				fmt.Fprintf(w, "%s: %s: %s\n", r.Scenario, inv, v)
			}
		}
	}
}

// takeover is the failover cell: from the kill to the other replica's
// acquireTime, and the lease duration.
func takeover(r Result) string {
	if r.Takeover == nil {
		return "-"
	}
	return fmt.Sprintf("%s / %s", seconds(r.Takeover.AfterKillSeconds), seconds(r.Takeover.LeaseSeconds))
}

// againstFaultFree is the lossy cell: its requests over the fault-free
// run's, from the audit log and (in brackets) from the proxy.
func againstFaultFree(r Result) string {
	if r.FaultFree == nil {
		return "-"
	}
	audit, proxy := RequestRatios(r, *r.FaultFree)
	return fmt.Sprintf("%.2f× (proxy %.2f×)", audit, proxy)
}

// memoryCell is the memory cell: RSS, heap in use after a collection and
// goroutines before the fault and after convergence, the clients built for
// the rewrites, and the bound on the peak RSS.
func memoryCell(r Result) string {
	m := r.Memory
	if m == nil {
		return "-"
	}
	return fmt.Sprintf("RSS %d → %d MiB, heap %d → %d MiB, goroutines %d → %d; %d clients for %d rewrites; bound %d MiB",
		m.Before.RSSBytes>>20, m.After.RSSBytes>>20, m.Before.HeapInuseBytes>>20, m.After.HeapInuseBytes>>20,
		m.Before.Goroutines, m.After.Goroutines, m.ClientsBuilt, m.Rewrites, m.LimitBytes>>21)
}

func seconds(s float64) string {
	if s < 10 {
		return fmt.Sprintf("%.1fs", s)
	}
	return fmt.Sprintf("%.0fs", s)
}

// sortedKeys returns m's keys in order, for stable messages.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
