package scale

import (
	"fmt"
	"maps"
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

// The controllers the benchmark can measure (BENCH_CONTROLLERS), each by a
// spec of its own: the add-on (AddonSpec); the add-on under the
// multi-tenancy lockdown (LockdownSpec); and helm-controller with
// driftDetection.mode warn on the same releases, for comparison
// (HelmControllerSpec).
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

// The harness's own timing. They were BENCH_* variables; no recorded
// figure was measured with other values, and a figure is only comparable
// with another measured with the same ones.
const (
	// resync is the controller's --resync-interval and every
	// HelmRelease's spec.interval. The figures are per resync: this one is
	// short enough for a window of two resyncs to keep the CI smoke short,
	// and long enough that the add-on's default workers reconcile every
	// release once a resync at the largest documented size, so that a
	// per-resync figure is a per-pass one.
	resync = 30 * time.Second
	// settle is the pause between convergence and the window: one resync,
	// for the passes the controller's own corrections trigger, which at
	// large fleets outlast a few seconds. A shorter settle let the window
	// of the capi-locked fleet count the first confirmation of each
	// rotated original, which a steady state never makes again.
	settle = resync
	// idleSample is how long the API server's background CPU is sampled
	// before the controller starts: long enough to span several of its
	// periodic tasks, short against a run. It is only the floor taken off
	// the API server's per-reconcile CPU.
	idleSample = 5 * time.Second
	// convergeTimeout bounds the wait for convergence. It catches a stuck
	// run, not a slow one: it is far above every documented convergence,
	// so a busy machine does not fail a run that would converge.
	convergeTimeout = 15 * time.Minute
)

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
	// on a fresh control plane (BENCH_CONTROLLERS, space-separated; every
	// one by default).
	Controllers []string
	// Resync is the controller's --resync-interval (ControllerFlags).
	// ConfigFromEnv sets the benchmark's own, resync, which its fleets'
	// spec.interval and its settle use too; the chaos matrix passes its
	// own.
	Resync time.Duration
	// Window is the steady-state window (BENCH_WINDOW, two resyncs): a
	// longer one shows what the lockdown's reviews cost over many
	// resyncs.
	Window time.Duration
	// ControllerArgs are more flags for the add-on (BENCH_CONTROLLER_ARGS,
	// space-separated), after the harness's own.
	ControllerArgs []string
	// ControllerEnv is more environment for the add-on's process
	// (BENCH_CONTROLLER_ENV, space-separated NAME=value, e.g. GOGC=50), to
	// measure the Go runtime's settings without changing the API server's.
	ControllerEnv []string
	// ControllerBin runs this binary instead of building the working tree's
	// (BENCH_CONTROLLER_BIN), to measure another commit with the same
	// harness.
	ControllerBin string
	// KeepAudit keeps the audit log of a successful run (BENCH_KEEP_AUDIT=1),
	// to study the requests' timing; a failed run's is always kept.
	KeepAudit bool
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

// removedVariables are the BENCH_* variables the harness no longer reads,
// with what took their place: a run that sets one fails rather than
// measure something else than it asked for.
var removedVariables = map[string]string{
	"BENCH_RESYNC":               "the resync is the constant resync",
	"BENCH_SETTLE":               "the settle is the constant settle, one resync",
	"BENCH_IDLE":                 "the idle sample is the constant idleSample",
	"BENCH_CONVERGE_TIMEOUT":     "the bound is the constant convergeTimeout",
	"BENCH_OUT":                  "the report is always _artifacts/bench/<timestamp>.json",
	"BENCH_HELM_CONTROLLER_ARGS": "helm-controller runs with HelmControllerFlags",
}

// ConfigFromEnv reads the configuration from getenv (os.Getenv in the
// benchmark, a map in tests).
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	for _, name := range slices.Sorted(maps.Keys(removedVariables)) {
		if getenv(name) != "" {
			return Config{}, fmt.Errorf("%s is no longer read: %s (test/scale/config.go)", name, removedVariables[name])
		}
	}
	c := Config{Resync: resync, Window: 2 * resync, KeepAudit: getenv("BENCH_KEEP_AUDIT") == "1",
		ControllerArgs: strings.Fields(getenv("BENCH_CONTROLLER_ARGS")), ControllerBin: getenv("BENCH_CONTROLLER_BIN"),
		ControllerEnv: strings.Fields(getenv("BENCH_CONTROLLER_ENV")), Floor: getenv("BENCH_FLOOR") != "0"}
	var err error
	if c.Controllers, err = controllersFromEnv(getenv("BENCH_CONTROLLERS")); err != nil {
		return Config{}, err
	}
	if c.Fleets, err = fleetsFromEnv(getenv("BENCH_FLEETS")); err != nil {
		return Config{}, err
	}
	if c.Sizes, err = sizesFromEnv(getenv("BENCH_N")); err != nil {
		return Config{}, err
	}
	if c.Shards, err = shardsFromEnv(getenv("BENCH_SHARDS")); err != nil {
		return Config{}, err
	}
	if err := harness.ParseDurations(getenv, "30s", []harness.NamedDuration{
		{Name: "BENCH_WINDOW", Into: &c.Window}, {Name: "BENCH_CPU_PROFILE", Into: &c.CPUProfile},
	}); err != nil {
		return Config{}, err
	}
	return c, nil
}

// controllersFromEnv reads BENCH_CONTROLLERS: DefaultControllers when
// empty.
func controllersFromEnv(v string) ([]string, error) {
	names := strings.Fields(v)
	if len(names) == 0 {
		return DefaultControllers, nil
	}
	for _, name := range names {
		if !slices.Contains(DefaultControllers, name) {
			return nil, fmt.Errorf("failed to parse BENCH_CONTROLLERS %q: %q is none of %s", v, name, strings.Join(DefaultControllers, ", "))
		}
	}
	return names, nil
}

// fleetsFromEnv reads BENCH_FLEETS: DefaultFleets when empty.
func fleetsFromEnv(v string) ([]Fleet, error) {
	names := strings.Fields(v)
	if len(names) == 0 {
		names = DefaultFleets
	}
	out := make([]Fleet, 0, len(names))
	for _, name := range names {
		f, err := FleetNamed(name)
		if err != nil {
			return nil, fmt.Errorf("failed to parse BENCH_FLEETS %q: %w", v, err)
		}
		out = append(out, f)
	}
	return out, nil
}

// sizesFromEnv reads BENCH_N: DefaultSizes when empty. A fleet has at
// least 2 releases: the reaction drifts a release in sync from the start,
// and release 0 is drifted.
func sizesFromEnv(v string) ([]int, error) {
	fields := strings.Fields(v)
	if len(fields) == 0 {
		return DefaultSizes, nil
	}
	out := make([]int, 0, len(fields))
	for _, s := range fields {
		n, err := strconv.Atoi(s)
		if err != nil || n < 2 {
			return nil, fmt.Errorf("failed to parse BENCH_N %q: each size must be an integer of at least 2", v)
		}
		out = append(out, n)
	}
	return out, nil
}

// shardsFromEnv reads BENCH_SHARDS: 1 when empty.
func shardsFromEnv(v string) (int, error) {
	if v == "" {
		return 1, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("failed to parse BENCH_SHARDS %q: want a whole number of at least 1", v)
	}
	return n, nil
}
