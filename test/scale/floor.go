package scale

import (
	"context"
	"fmt"
	"os"
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

// FloorSpecInput is what the write floor replays, and where.
type FloorSpecInput struct {
	// Fleet and N are the add-on's fleet, created again on the floor's
	// control plane.
	Fleet Fleet
	N     int
	// AuditLog is the add-on's run's audit log, with its writes' bodies
	// (writesPolicy), User the add-on's user in it, and Convergence the
	// window from its start to its convergence.
	AuditLog    string
	User        string
	Convergence Window
	// Flags are the add-on's flags, whose --concurrent, --kube-api-qps
	// and --kube-api-burst the replay's client takes, and Shards its
	// processes, each with its own workers and client.
	Flags  []string
	Shards int
	// Dir is the floor's folder (its control plane's audit log), and Logf
	// the harness's log.
	Dir  string
	Logf func(format string, args ...any)
}

// FloorSpec replays the add-on's convergence dry-runs, then its writes,
// on a fresh control plane with the same fleet, and returns the floor
// against the add-on's convergence. The add-on must be stopped first: the
// two control planes share the machine.
func FloorSpec(ctx context.Context, in FloorSpecInput) (*Floor, error) {
	if err := harness.Sleep(ctx, auditFlush); err != nil {
		return nil, err
	}
	writes, dryRuns, err := convergenceReplays(in.AuditLog, in.User, in.Convergence)
	if err != nil {
		return nil, err
	}
	workers, qps, burst, err := clientSettings(in.Flags)
	if err != nil {
		return nil, err
	}
	// Each shard has its workers and its client's rate limits: the
	// replay's are their sum.
	shards := max(in.Shards, 1)
	workers, qps, burst = workers*shards, qps*float32(shards), burst*shards
	kubeconfig, stop, err := floorControlPlane(ctx, in)
	if err != nil {
		return nil, err
	}
	defer stop()
	// The dry-runs go first: they store nothing, so the writes then find
	// the fleet as the add-on found it.
	var dryRunSeconds float64
	if len(dryRuns) > 0 {
		if dryRunSeconds, _, err = sendReplays(ctx, kubeconfig, dryRuns, workers, qps, burst); err != nil {
			return nil, err
		}
	}
	seconds, unlimited, err := sendReplays(ctx, kubeconfig, writes, workers, qps, burst)
	if err != nil {
		return nil, err
	}
	f := newFloor(in.Convergence.End.Sub(in.Convergence.Start).Seconds(), len(writes), seconds, len(dryRuns), dryRunSeconds)
	f.Workers, f.QPS, f.Burst, f.Unlimited = workers, qps, burst, unlimited
	return f, nil
}

// convergenceReplays reads the add-on's stored writes and its dry-runs
// until it converged from its audit log, as replays.
func convergenceReplays(auditLog, user string, convergence Window) (writes, dryRuns []Replay, err error) {
	calls, err := ConvergenceWrites(auditLog, user, convergence)
	if err != nil {
		return nil, nil, err
	}
	if writes, err = replaysOf(calls); err != nil {
		return nil, nil, err
	}
	if calls, err = ConvergenceDryRuns(auditLog, user, convergence); err != nil {
		return nil, nil, err
	}
	if dryRuns, err = replaysOf(calls); err != nil {
		return nil, nil, err
	}
	return writes, dryRuns, nil
}

// floorControlPlane starts the floor's control plane, with the add-on's
// fleet and user, and returns that user's kubeconfig and what stops it.
func floorControlPlane(ctx context.Context, in FloorSpecInput) (kubeconfig string, stop func(), err error) {
	if err := os.MkdirAll(in.Dir, 0o755); err != nil {
		return "", nil, err
	}
	flags, _, err := harness.AuditFlags(in.Dir, writesPolicy(in.User))
	if err != nil {
		return "", nil, err
	}
	env, err := testenv.StartWith("bench-floor-"+strconv.Itoa(in.N), testenv.Options{ProviderCRDs: true, APIServerFlags: flags, OmitKinds: in.Fleet.Omit})
	if err != nil {
		return "", nil, err
	}
	stop = func() {
		if err := env.Stop(); err != nil {
			in.Logf("N=%d: %v", in.N, err)
		}
	}
	if kubeconfig, err = env.AddUser(in.User, masters); err == nil {
		err = CreateFleet(ctx, env, in.N, resync, nil, in.Fleet.Render)
	}
	if err != nil {
		stop()
		return "", nil, err
	}
	return kubeconfig, stop, nil
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
