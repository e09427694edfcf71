package scale

import (
	"encoding/json"
	"os"
	"path/filepath"
	"time"

	"github.com/templatedrift/template-drift-controller/test/harness"
)

// Result is what one run measured for one fleet size. Durations are in
// seconds, CPU per reconcile in milliseconds; a figure that could not be
// computed (no reconcile in the window) is null.
type Result struct {
	// Controller is the controller measured: TemplateDriftController,
	// Lockdown or HelmController.
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
	// with shards, the sum of theirs.
	Memory harness.Memory `json:"memory"`

	// The optional sections, one per measurement that has figures of its
	// own.

	// Addon is what only a run of the add-on measures, its own
	// (AddonSpec) or under the lockdown (LockdownSpec); nil for
	// helm-controller.
	Addon *AddonFigures `json:"addon,omitempty"`
	// Floor is the add-on's write floor (FloorSpec, after AddonSpec with
	// BENCH_FLOOR on); nil when not measured.
	Floor *Floor `json:"floor,omitempty"`
}

// AddonFigures are the figures only the add-on's runs have.
type AddonFigures struct {
	// Shards is how many processes shared the fleet (BENCH_SHARDS), and
	// ShardMemory each one's resident memory at the window's end, whose
	// sum is Result.Memory.
	Shards      int              `json:"shards"`
	ShardMemory []harness.Memory `json:"shardMemory"`
	// Breakdown is where its convergence went, from its metrics.
	Breakdown Breakdown `json:"breakdown"`
	// GoMemory is where the first process's memory goes at the window's
	// end, as its Go runtime reports it.
	GoMemory GoMemory `json:"goMemory"`
	// Reactions are the drifts written after the window, one at a time,
	// and how long each took to heal.
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
