package scale

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/templatedrift/template-drift-controller/internal/testenv"
	"github.com/templatedrift/template-drift-controller/test/harness"
)

// The write floor: the time the API server takes for the writes the
// add-on made while it converged, sent by a plain client with the
// controller's client settings and none of its work (no informers, no
// decoding, no diff, no dry-run), on a fresh control plane with the same
// fleet. The add-on's convergence over the floor is what its own work
// costs. The same client first sends the add-on's dry-runs again on that
// fleet, which they leave as it was: their time is the part of that cost
// the design's dry-runs take, whatever the controller's code does, and the
// rest is the controller's start, CPU and queue.

// Floor is the write floor of one run.
type Floor struct {
	// Writes are the writes replayed: every stored write of the add-on
	// until it converged, in the order the audit log has them.
	Writes int `json:"writes"`
	// Seconds is from the first replayed write to the last answer.
	Seconds float64 `json:"seconds"`
	// Workers and QPS, Burst are the replay's concurrency and client
	// rate limit: the controller's --concurrent, --kube-api-qps and
	// --kube-api-burst.
	Workers int     `json:"workers"`
	QPS     float32 `json:"qps"`
	Burst   int     `json:"burst"`
	// Unlimited says the replay's client had no rate limit, as the
	// controller's has none when the API server has API Priority and
	// Fairness: QPS and Burst are then the flags', not applied.
	Unlimited bool `json:"unlimited,omitempty"`
	// Ratio is the add-on's convergence over Seconds.
	Ratio float64 `json:"ratio"`
	// DryRuns are the add-on's dry-runs until it converged, sent again the
	// same way before the writes, and DryRunSeconds their time.
	DryRuns       int     `json:"dryRuns"`
	DryRunSeconds float64 `json:"dryRunSeconds"`
	// RequestRatio is the add-on's convergence over Seconds and
	// DryRunSeconds: what the controller's own work costs beyond the
	// requests it makes.
	RequestRatio float64 `json:"requestRatio,omitempty"`
}

// limit is the replay client's rate limit, as the summary prints it.
func (f Floor) limit() string {
	if f.Unlimited {
		return "no client rate limit: API Priority and Fairness"
	}
	return fmt.Sprintf("QPS %g, burst %d", f.QPS, f.Burst)
}

// The controller's defaults for the flags the replay copies.
const (
	defaultConcurrent = 4
	defaultQPS        = 50
	defaultBurst      = 300
)

// writesPolicy logs user's writes with their bodies (the replay sends
// them again) and every other request at the Metadata level.
func writesPolicy(user string) string {
	return `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Request
  users: ["` + user + `"]
  verbs: ["create", "update", "patch", "delete"]
- level: Metadata
`
}

// clientSettings are the replay's workers, QPS and burst: the
// controller's defaults, or the values args gives them.
func clientSettings(args []string) (workers int, qps float32, burst int, err error) {
	workers, qps, burst = defaultConcurrent, defaultQPS, defaultBurst
	for _, a := range args {
		name, value, ok := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !ok {
			continue
		}
		switch name {
		case "concurrent":
			workers, err = strconv.Atoi(value)
		case "kube-api-qps":
			var f float64
			f, err = strconv.ParseFloat(value, 32)
			qps = float32(f)
		case "kube-api-burst":
			burst, err = strconv.Atoi(value)
		}
		if err != nil {
			return 0, 0, 0, fmt.Errorf("failed to parse the controller argument %q: %w", a, err)
		}
	}
	return workers, qps, burst, nil
}

// measureFloor replays the add-on's convergence writes on a fresh control
// plane with the same fleet, and records the floor against the add-on's
// convergence. The controller is stopped first: the two control planes
// share the machine.
func (r *run) measureFloor(ctx context.Context) error {
	if !r.floorMeasured() {
		return nil
	}
	if err := harness.Sleep(ctx, auditFlush); err != nil {
		return err
	}
	writes, err := ConvergenceWrites(r.auditLog, r.target.User, r.convergence)
	if err != nil {
		return err
	}
	dryRuns, err := ConvergenceDryRuns(r.auditLog, r.target.User, r.convergence)
	if err != nil {
		return err
	}
	replays, err := replaysOf(writes)
	if err != nil {
		return err
	}
	dryRunReplays, err := replaysOf(dryRuns)
	if err != nil {
		return err
	}
	workers, qps, burst, err := clientSettings(r.target.Flags)
	if err != nil {
		return err
	}
	// Each shard has its workers and its client's rate limits: the
	// replay's are their sum.
	shards := max(r.target.Shards, 1)
	workers, qps, burst = workers*shards, qps*float32(shards), burst*shards
	r.stopShards()
	dir := filepath.Join(r.dir, "floor")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	flags, _, err := harness.AuditFlags(dir, writesPolicy(r.target.User))
	if err != nil {
		return err
	}
	env, err := testenv.StartWith("bench-floor-"+strconv.Itoa(r.n), testenv.Options{ProviderCRDs: true, APIServerFlags: flags, ExtraCRDDirs: r.target.CRDDirs, OmitKinds: r.fleet.Omit})
	if err != nil {
		return err
	}
	defer func() {
		if err := env.Stop(); err != nil {
			r.logf("N=%d: %v", r.n, err)
		}
	}()
	kubeconfig, err := env.AddUser(r.target.User, []string{"system:masters"})
	if err != nil {
		return err
	}
	if err := CreateFleet(ctx, env, r.n, r.cfg.Resync, nil, r.fleet.Render); err != nil {
		return err
	}
	// The dry-runs go first: they store nothing, so the writes then find
	// the fleet as the add-on found it.
	var dryRunSeconds float64
	if len(dryRunReplays) > 0 {
		if dryRunSeconds, _, err = sendReplays(ctx, kubeconfig, dryRunReplays, workers, qps, burst); err != nil {
			return err
		}
	}
	seconds, unlimited, err := sendReplays(ctx, kubeconfig, replays, workers, qps, burst)
	if err != nil {
		return err
	}
	r.res.Floor = newFloor(r.res.ConvergenceSeconds, len(replays), seconds, len(dryRunReplays), dryRunSeconds)
	r.res.Floor.Workers, r.res.Floor.QPS, r.res.Floor.Burst, r.res.Floor.Unlimited = workers, qps, burst, unlimited
	return nil
}

// newFloor records the replays' times against the add-on's convergence.
func newFloor(convergence float64, writes int, seconds float64, dryRuns int, dryRunSeconds float64) *Floor {
	f := &Floor{Writes: writes, Seconds: seconds, DryRuns: dryRuns, DryRunSeconds: dryRunSeconds}
	if seconds > 0 {
		f.Ratio = convergence / seconds
		f.RequestRatio = convergence / (seconds + dryRunSeconds)
	}
	return f
}

// floorMeasured reports whether the run measures the write floor: the
// add-on's own run (not under the lockdown, whose writes are a tenant's),
// with BENCH_FLOOR on.
func (r *run) floorMeasured() bool {
	return r.cfg.Floor && !r.target.IsHelmController() && !r.target.Lockdown
}
