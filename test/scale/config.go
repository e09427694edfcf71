package scale

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/templatedrift/template-drift-controller/test/harness"
)

// ControllerUser is the user the controller runs as: the audit log's
// events of this user are the controller's requests.
const ControllerUser = "template-drift-controller-bench"

// HelmControllerUser is the user helm-controller runs as, when it is
// measured with the same harness.
const HelmControllerUser = "helm-controller-bench"

// The controllers the benchmark can measure (BENCH_CONTROLLERS): the
// add-on; the add-on under the multi-tenancy lockdown (the chart's role
// with defaultServiceAccount, --default-service-account, every release's
// namespace with its tenant account); and helm-controller with
// driftDetection.mode warn on the same releases, for comparison.
const (
	TemplateDriftController = "template-drift-controller"
	Lockdown                = "lockdown"
	HelmController          = "helm-controller"
)

// DefaultControllers are the controllers run when BENCH_CONTROLLERS is not
// set, each on a control plane of its own per fleet size.
var DefaultControllers = []string{TemplateDriftController, Lockdown, HelmController}

// DefaultSizes are the fleet sizes run when BENCH_N is not set.
var DefaultSizes = []int{100, 300, 1000}

// Config is how a benchmark runs, from the BENCH_* environment variables.
type Config struct {
	// Sizes are the fleet sizes, each run on a fresh control plane
	// (BENCH_N, space-separated).
	Sizes []int
	// Fleets are the shapes of management cluster measured, each at every
	// size (BENCH_FLEETS, space-separated names of Fleets; "full" by
	// default).
	Fleets []Fleet
	// Controllers are the controllers measured at each size, in turn, each
	// on a fresh control plane (BENCH_CONTROLLERS, space-separated; both by
	// default).
	Controllers []string
	// Resync is the controller's --resync-interval and every
	// HelmRelease's spec.interval (BENCH_RESYNC, 30s).
	Resync time.Duration
	// Window is the steady-state window (BENCH_WINDOW, two resyncs).
	Window time.Duration
	// Settle is the pause between convergence and the window, for the
	// passes the controller's own corrections trigger (BENCH_SETTLE, one
	// resync). At 1,000 releases those passes take longer than 5 s: with
	// a 5 s settle the window of the capi-locked fleet counted the first
	// confirmation of each rotated original (0.53 requests per release per
	// resync), which a steady state never makes again.
	Settle time.Duration
	// Idle is how long the API server's background CPU is sampled before
	// the controller starts (BENCH_IDLE, 5s).
	Idle time.Duration
	// ConvergeTimeout bounds the wait for convergence
	// (BENCH_CONVERGE_TIMEOUT, 15m).
	ConvergeTimeout time.Duration
	// ControllerArgs are more flags for the controller
	// (BENCH_CONTROLLER_ARGS, space-separated), after the harness's own.
	ControllerArgs []string
	// ControllerEnv is more environment for the add-on's process
	// (BENCH_CONTROLLER_ENV, space-separated NAME=value, e.g. GOGC=50), to
	// measure the Go runtime's settings without changing the API server's.
	ControllerEnv []string
	// ControllerBin runs this binary instead of building the working tree's
	// (BENCH_CONTROLLER_BIN), to measure another commit with the same
	// harness.
	ControllerBin string
	// HelmControllerArgs are more flags for helm-controller
	// (BENCH_HELM_CONTROLLER_ARGS, space-separated), after the harness's own.
	HelmControllerArgs []string
	// KeepAudit keeps the audit log of a successful run (BENCH_KEEP_AUDIT=1);
	// a failed run's is always kept.
	KeepAudit bool
	// Out is the JSON report's path (BENCH_OUT; by default
	// _artifacts/bench/<timestamp>.json).
	Out string
	// Floor measures the add-on's write floor after each of its runs
	// (BENCH_FLOOR; on unless 0): its convergence writes sent again by a
	// plain client on a fresh control plane with the same fleet.
	Floor bool
	// CPUProfile is how long a CPU profile of the add-on is read from its
	// start, into its run's directory (BENCH_CPU_PROFILE; none by
	// default).
	CPUProfile time.Duration
	// Shards is how many processes of the add-on share the fleet
	// (BENCH_SHARDS; 1 by default): each runs with
	// --watch-label-selector on Flux's sharding label, and each release
	// is labelled for one of them in turn. helm-controller always runs as
	// one process.
	Shards int
}

// ConfigFromEnv reads the configuration from getenv (os.Getenv in the
// benchmark, a map in tests).
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	c := Config{Sizes: DefaultSizes, Controllers: DefaultControllers, Resync: 30 * time.Second, Idle: 5 * time.Second,
		ConvergeTimeout: 15 * time.Minute, KeepAudit: getenv("BENCH_KEEP_AUDIT") == "1", Out: getenv("BENCH_OUT"),
		ControllerArgs: strings.Fields(getenv("BENCH_CONTROLLER_ARGS")), ControllerBin: getenv("BENCH_CONTROLLER_BIN"),
		ControllerEnv:      strings.Fields(getenv("BENCH_CONTROLLER_ENV")),
		HelmControllerArgs: strings.Fields(getenv("BENCH_HELM_CONTROLLER_ARGS")), Floor: getenv("BENCH_FLOOR") != "0"}
	if v := strings.Fields(getenv("BENCH_CONTROLLERS")); len(v) > 0 {
		for _, name := range v {
			if !slices.Contains(DefaultControllers, name) {
				return Config{}, fmt.Errorf("failed to parse BENCH_CONTROLLERS %q: %q is none of %s",
					getenv("BENCH_CONTROLLERS"), name, strings.Join(DefaultControllers, ", "))
			}
		}
		c.Controllers = v
	}
	names := DefaultFleets
	if v := strings.Fields(getenv("BENCH_FLEETS")); len(v) > 0 {
		names = v
	}
	for _, name := range names {
		f, err := FleetNamed(name)
		if err != nil {
			return Config{}, fmt.Errorf("failed to parse BENCH_FLEETS %q: %w", getenv("BENCH_FLEETS"), err)
		}
		c.Fleets = append(c.Fleets, f)
	}
	if v := strings.Fields(getenv("BENCH_N")); len(v) > 0 {
		c.Sizes = nil
		for _, s := range v {
			n, err := strconv.Atoi(s)
			if err != nil || n < 2 {
				return Config{}, fmt.Errorf("failed to parse BENCH_N %q: each size must be an integer of at least 2", getenv("BENCH_N"))
			}
			c.Sizes = append(c.Sizes, n)
		}
	}
	if err := harness.ParseDurations(getenv, "30s", []harness.NamedDuration{
		{Name: "BENCH_RESYNC", Into: &c.Resync}, {Name: "BENCH_SETTLE", Into: &c.Settle}, {Name: "BENCH_IDLE", Into: &c.Idle},
		{Name: "BENCH_CONVERGE_TIMEOUT", Into: &c.ConvergeTimeout}, {Name: "BENCH_WINDOW", Into: &c.Window},
		{Name: "BENCH_CPU_PROFILE", Into: &c.CPUProfile},
	}); err != nil {
		return Config{}, err
	}
	c.Shards = 1
	if v := getenv("BENCH_SHARDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return Config{}, fmt.Errorf("failed to parse BENCH_SHARDS %q: want a whole number of at least 1", v)
		}
		c.Shards = n
	}
	if c.Window == 0 {
		c.Window = 2 * c.Resync
	}
	if c.Settle == 0 {
		c.Settle = c.Resync
	}
	return c, nil
}
