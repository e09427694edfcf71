package scale

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
)

// The table the benchmark prints: one row per run, the columns of
// docs/benchmarks.md.

// verbOrder is the order of the by-verb columns; other verbs follow,
// sorted.
var verbOrder = []string{"get", "list", "watch", "create", "update", "patch", "delete"}

// WriteTable prints the results as one table: one row per fleet size and
// controller, the requests by verb of every verb any run made.
func WriteTable(w io.Writer, runs []Result) error {
	verbs := tableVerbs(runs)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := []string{"N", "fleet", "controller", "setup", "converge", "req/HR/resync"}
	head = append(head, verbs...)
	head = append(head, "writes", "upgrades", "reconciles/HR/resync", "CPU/reconcile ctrl", "CPU/reconcile apiserver", "RSS", "RSS/HR", "peak RSS", "shards", "write floor", "reaction (min-max)")
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, r := range runs {
		row := []string{fmt.Sprint(r.N), r.Fleet, r.Controller, seconds(r.SetupSeconds), seconds(r.ConvergenceSeconds), fmt.Sprintf("%.2f", r.RequestsPerHRPerResync)}
		for _, v := range verbs {
			row = append(row, fmt.Sprintf("%.2f", r.ByVerbPerHRPerResync[v]))
		}
		row = append(row, fmt.Sprint(r.Writes), fmt.Sprint(r.Upgrades), fmt.Sprintf("%.2f", r.ReconcilesPerHRPerResync),
			millis(r.ControllerCPUPerReconcileMs), millis(r.APIServerCPUPerReconcileMs),
			mebibytes(r.Memory.RSS), perRelease(r), mebibytes(r.Memory.Peak),
			shardsCell(r), floorCell(r), reactions(r))
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	return tw.Flush()
}

// tableVerbs are the by-verb columns: get, list and watch always (a zero
// says the controller made none), then every other verb a run made.
func tableVerbs(runs []Result) []string {
	seen := map[string]bool{"get": true, "list": true, "watch": true}
	for _, r := range runs {
		for v := range r.Requests.ByVerb {
			seen[v] = true
		}
	}
	var out, rest []string
	for _, v := range verbOrder {
		if seen[v] {
			out = append(out, v)
			delete(seen, v)
		}
	}
	for v := range seen {
		rest = append(rest, v)
	}
	slices.Sort(rest)
	return append(out, rest...)
}

func seconds(s float64) string {
	if s < 10 {
		return fmt.Sprintf("%.2fs", s)
	}
	return fmt.Sprintf("%.0fs", math.Round(s))
}

// reactionRange returns the shortest and the longest time to heal of rs.
func reactionRange(rs []Reaction) (lo, hi float64) {
	for i, x := range rs {
		if i == 0 || x.HealedSeconds < lo {
			lo = x.HealedSeconds
		}
		hi = max(hi, x.HealedSeconds)
	}
	return lo, hi
}

// reactions is the table's reaction column: "n/a" for a controller that
// does not heal (helm-controller in warn mode), "-" when none was measured.
func reactions(r Result) string {
	if r.Addon == nil {
		return "n/a"
	}
	if len(r.Addon.Reactions) == 0 {
		return "-"
	}
	lo, hi := reactionRange(r.Addon.Reactions)
	return seconds(lo) + "-" + seconds(hi)
}

func millis(ms *float64) string {
	if ms == nil {
		return "-"
	}
	return fmt.Sprintf("%.1f ms", *ms)
}

// perRelease is the RSS per release, in KiB.
func perRelease(r Result) string {
	if r.N == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f KiB", float64(r.Memory.RSS)/1024/float64(r.N))
}

// floorCell is the write floor and the convergence over it: "12s (1.4×,
// 2,500 writes)", then the dry-runs' time and the convergence over the two
// when the add-on made dry-runs: "+ 3s for 1000 dry-runs (1.1×)"; or "-".
func floorCell(r Result) string {
	f := r.Floor
	if f == nil {
		return "-"
	}
	cell := fmt.Sprintf("%s (%.2f×, %d writes)", seconds(f.Seconds), f.Ratio, f.Writes)
	if f.DryRuns > 0 {
		cell += fmt.Sprintf(" + %s for %d dry-runs (%.2f×)", seconds(f.DryRunSeconds), f.DryRuns, f.RequestRatio)
	}
	return cell
}

func mebibytes(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }
