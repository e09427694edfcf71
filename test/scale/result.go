package scale

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/templatedrift/template-drift-controller/test/harness"
)

// Result is what one run measured for one fleet size. Durations are in
// seconds, CPU per reconcile in milliseconds; a figure that could not be
// computed (no reconcile in the window) is null.
type Result struct {
	// Controller is the controller measured: TemplateDriftController or
	// HelmController.
	Controller string `json:"controller"`
	// N is the number of opted-in HelmReleases.
	N int `json:"n"`
	// Fleet is the shape of the management cluster (Fleets): which kinds
	// it serves. TemplatesPerRelease and DriftedPerRelease describe its
	// releases; every other release is drifted.
	Fleet               string `json:"fleet"`
	TemplatesPerRelease int    `json:"templatesPerRelease"`
	DriftedPerRelease   int    `json:"driftedTemplatesPerDriftedRelease"`
	// ControlPlaneStartSeconds is how long kube-apiserver and etcd took to start.
	ControlPlaneStartSeconds float64 `json:"controlPlaneStartSeconds"`
	// SetupSeconds is how long creating the fleet took.
	SetupSeconds float64 `json:"setupSeconds"`
	// ConvergenceSeconds is from the controller's start until every
	// HelmRelease reports TemplatesInSync=True (helm-controller: Ready=True
	// at its generation, no release action in flight).
	ConvergenceSeconds float64 `json:"convergenceSeconds"`
	// ConvergenceRequests are the controller's requests until then.
	ConvergenceRequests Requests `json:"convergenceRequests"`
	// ConvergenceCPUSeconds is the CPU time the controller used until then.
	ConvergenceCPUSeconds float64 `json:"convergenceCpuSeconds"`

	// WindowSeconds and ResyncSeconds are the steady-state window and the
	// resync interval it is measured against.
	WindowSeconds float64 `json:"windowSeconds"`
	ResyncSeconds float64 `json:"resyncSeconds"`
	// Requests are the controller's requests in the window.
	Requests Requests `json:"requests"`
	// RequestsPerHRPerResync is Requests.Total per HelmRelease per resync
	// interval, and ByVerbPerHRPerResync the same by verb.
	RequestsPerHRPerResync float64            `json:"requestsPerHrPerResync"`
	ByVerbPerHRPerResync   map[string]float64 `json:"byVerbPerHrPerResync"`
	// Writes is the number of write requests in the window, dry-runs left
	// out; DryRuns is the number of dry-run writes (counted in Requests).
	Writes  int `json:"writes"`
	DryRuns int `json:"dryRuns"`
	// Upgrades is the number of Helm release Secrets created in the
	// window: one per Helm upgrade (0 for the add-on, which never writes
	// them, and 0 for helm-controller when it only detects drift).
	Upgrades int `json:"upgrades"`
	// Reconciles is the number of reconciles in the window, from the
	// controller's metrics, and ReconcilesPerHRPerResync the same per
	// HelmRelease per resync interval (about 1 in a steady state).
	Reconciles               float64 `json:"reconciles"`
	ReconcilesPerHRPerResync float64 `json:"reconcilesPerHrPerResync"`
	// CPU time per reconcile in the window, in milliseconds, of the
	// controller, the API server and etcd.
	ControllerCPUPerReconcileMs *float64 `json:"controllerCpuPerReconcileMs"`
	APIServerCPUPerReconcileMs  *float64 `json:"apiServerCpuPerReconcileMs"`
	EtcdCPUPerReconcileMs       *float64 `json:"etcdCpuPerReconcileMs"`
	// APIServerIdleCPUMsPerSecond is the API server's CPU use with the
	// fleet created and no controller running: its own background work,
	// which the per-reconcile figure includes. APIServerCPUAboveIdle...
	// is the per-reconcile figure with that floor taken off (it can come
	// out below zero when the controller adds less than the noise).
	APIServerIdleCPUMsPerSecond         float64  `json:"apiServerIdleCpuMsPerSecond"`
	APIServerCPUAboveIdlePerReconcileMs *float64 `json:"apiServerCpuAboveIdlePerReconcileMs"`
	// Memory is the controller's resident memory at the window's end:
	// with shards, the sum of theirs, and ShardMemory each one's.
	Memory      harness.Memory   `json:"memory"`
	ShardMemory []harness.Memory `json:"shardMemory,omitempty"`
	// GoMemory is where the (first) controller's memory goes at the
	// window's end, as its Go runtime reports it; nil for a controller
	// whose metrics do not say.
	GoMemory *GoMemory `json:"goMemory,omitempty"`
	// Shards is how many processes of the add-on shared the fleet.
	Shards int `json:"shards,omitempty"`

	// Floor is the add-on's write floor (BENCH_FLOOR), nil when not
	// measured.
	Floor *Floor `json:"floor,omitempty"`
	// Breakdown is where the add-on's convergence went, from its metrics.
	Breakdown *Breakdown `json:"breakdown,omitempty"`

	// Reactions are the drifts written after the window, one at a time;
	// none for helm-controller, which does not heal in warn mode.
	Reactions []Reaction `json:"reactions"`
}

// Reaction is one drift written to an in-sync template, and how long the
// controller took to react.
type Reaction struct {
	// Namespace is the release's.
	Namespace string `json:"namespace"`
	// HealedSeconds is from the write to the template being corrected,
	// and ReportedSeconds to its HelmRelease reporting DriftCorrected.
	HealedSeconds   float64 `json:"healedSeconds"`
	ReportedSeconds float64 `json:"reportedSeconds"`
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

// derive fills in the per-HelmRelease and per-reconcile figures from the
// window's counts and CPU samples.
func (r *Result) derive(start, end sample) {
	resyncs := r.WindowSeconds / r.ResyncSeconds
	per := func(v float64) float64 { return v / float64(r.N) / resyncs }
	r.RequestsPerHRPerResync = per(float64(r.Requests.Total))
	r.ByVerbPerHRPerResync = map[string]float64{}
	for verb, n := range r.Requests.ByVerb {
		r.ByVerbPerHRPerResync[verb] = per(float64(n))
	}
	r.Writes, r.DryRuns = r.Requests.Writes(), r.Requests.DryRuns()
	r.Upgrades = r.Requests.ByResource[releaseSecretCreate]
	r.Reconciles = end.reconciles - start.reconciles
	r.ReconcilesPerHRPerResync = per(r.Reconciles)
	perReconcile := func(a, b time.Duration) *float64 {
		if r.Reconciles <= 0 {
			return nil
		}
		v := float64(b-a) / float64(time.Millisecond) / r.Reconciles
		return &v
	}
	r.ControllerCPUPerReconcileMs = perReconcile(start.controller, end.controller)
	r.APIServerCPUPerReconcileMs = perReconcile(start.apiServer, end.apiServer)
	r.EtcdCPUPerReconcileMs = perReconcile(start.etcd, end.etcd)
	if r.APIServerCPUPerReconcileMs != nil {
		idle := r.APIServerIdleCPUMsPerSecond * end.at.Sub(start.at).Seconds() / r.Reconciles
		v := *r.APIServerCPUPerReconcileMs - idle
		r.APIServerCPUAboveIdlePerReconcileMs = &v
	}
}

// releaseSecretCreate is how Requests.ByResource names the creation of a
// Secret: Helm stores each new release revision as one.
const releaseSecretCreate = "create secrets"

// Report is the JSON file a benchmark writes: how it ran, and one Result
// per fleet size.
type Report struct {
	// Started is when the benchmark started.
	Started time.Time `json:"started"`
	// Commit is `git describe --always --dirty` of the working tree (the
	// code measured, unless ControllerBin is another build).
	Commit string `json:"commit"`
	// Cores, GoVersion, KubeVersion and EtcdVersion describe the machine
	// and the control plane.
	Cores       int    `json:"cores"`
	GoVersion   string `json:"goVersion"`
	KubeVersion string `json:"kubeVersion"`
	EtcdVersion string `json:"etcdVersion"`
	// ControllerBin is the binary measured: the working tree's, built by
	// the harness, unless BENCH_CONTROLLER_BIN named another.
	ControllerBin string `json:"controllerBin"`
	// ControllerArgs are the controller's flags, ports left out.
	ControllerArgs []string `json:"controllerArgs"`
	// HelmControllerBin and HelmControllerArgs are helm-controller's
	// binary and flags, when it was measured.
	HelmControllerBin  string   `json:"helmControllerBin,omitempty"`
	HelmControllerArgs []string `json:"helmControllerArgs,omitempty"`
	// Runs are the results, in the order run.
	Runs []Result `json:"runs"`
	// Comparisons are helm-controller's figures over the add-on's, for
	// each size both were measured at.
	Comparisons []Comparison `json:"comparisons,omitempty"`
	// Failure is the error that stopped the benchmark, if any.
	Failure string `json:"failure,omitempty"`
}

// WriteJSON writes r to path, creating its folder.
func (r Report) WriteJSON(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

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

func reactions(r Result) string {
	if r.Controller == HelmController {
		return "n/a"
	}
	if len(r.Reactions) == 0 {
		return "-"
	}
	lo, hi := reactionRange(r.Reactions)
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
