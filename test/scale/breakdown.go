package scale

import (
	"fmt"
	"io"
	"strings"
)

// Breakdown is where the add-on's convergence went, from its
// controller-runtime metrics at the moment it converged: the time its
// workers spent in passes, and the time releases waited in the workqueue
// for a worker. With W workers busy for the whole convergence,
// ReconcileSeconds is about W times the convergence; QueueSeconds is the
// waiting the workers' number leaves.
type Breakdown struct {
	// Reconciles is how many passes finished.
	Reconciles float64 `json:"reconciles"`
	// ReconcileSeconds is the sum of the passes' durations.
	ReconcileSeconds float64 `json:"reconcileSeconds"`
	// QueueSeconds is the sum of the time items waited in the workqueue.
	QueueSeconds float64 `json:"queueSeconds"`
	// CPUSeconds is the controller's CPU time until it converged.
	CPUSeconds float64 `json:"cpuSeconds"`
}

// The controller-runtime histograms the breakdown sums.
const (
	reconcileTimeSum = "controller_runtime_reconcile_time_seconds_sum"
	queueDurationSum = "workqueue_queue_duration_seconds_sum"
)

// ReadBreakdown scrapes the controller's metrics at addr for controller's
// reconciles and workqueue.
func ReadBreakdown(addr, controller string) (Breakdown, error) {
	text, err := scrapeMetrics(addr)
	if err != nil {
		return Breakdown{}, err
	}
	var out Breakdown
	label := `controller="` + controller + `"`
	if out.Reconciles, err = sumCounter(strings.NewReader(text), reconcileTotal, label); err != nil {
		return out, err
	}
	if out.ReconcileSeconds, err = sumCounter(strings.NewReader(text), reconcileTimeSum, label); err != nil {
		return out, err
	}
	if out.QueueSeconds, err = sumCounter(strings.NewReader(text), queueDurationSum, `name="`+controller+`"`); err != nil {
		return out, err
	}
	return out, nil
}

// WriteBreakdowns prints, under the table, where each of the add-on's
// convergences went: its write floor, the dry-runs and reads it made
// besides its writes, its workers' time in passes and in the queue, and
// its CPU.
func WriteBreakdowns(w io.Writer, runs []Result) {
	for _, r := range runs {
		a := r.Addon
		if a == nil {
			continue
		}
		b, c := a.Breakdown, r.ConvergenceRequests
		fmt.Fprintf(w, "\nN=%d %s %s: converged in %s with %d requests (%d writes, %d dry-runs, %d reads); %0.f passes, %s in passes and %s waiting in the queue (summed over workers); %s of CPU",
			r.N, r.Fleet, r.Controller, seconds(r.ConvergenceSeconds), c.Total, c.Writes(), c.DryRuns(),
			c.Total-c.Writes()-c.DryRuns(), b.Reconciles, seconds(b.ReconcileSeconds), seconds(b.QueueSeconds), seconds(b.CPUSeconds))
		if f := r.Floor; f != nil {
			fmt.Fprintf(w, "; write floor %s for the same %d writes (%d workers, %s): %.2f×", seconds(f.Seconds), f.Writes, f.Workers, f.limit(), f.Ratio)
			if f.DryRuns > 0 {
				fmt.Fprintf(w, "; the same %d dry-runs took %s more: %.2f× the two", f.DryRuns, seconds(f.DryRunSeconds), f.RequestRatio)
			}
		}
		if len(a.ShardMemory) > 1 {
			fmt.Fprintf(w, "; at the window's end the first shard's RSS %s: %s", mebibytes(a.ShardMemory[0].RSS), a.GoMemory)
		} else {
			fmt.Fprintf(w, "; at the window's end RSS %s: %s", mebibytes(r.Memory.RSS), a.GoMemory)
		}
		fmt.Fprintln(w)
	}
}
