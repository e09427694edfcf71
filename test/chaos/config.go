package chaos

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/templatedrift/template-drift-controller/test/harness"
)

// The chaos scenarios, by the names CHAOS_SCENARIOS takes.
const (
	// ScenarioKill SIGKILLs the controller at random points.
	ScenarioKill = "kill"
	// ScenarioRestart restarts kube-apiserver on the same etcd.
	ScenarioRestart = "restart"
	// ScenarioCompact restarts kube-apiserver on etcd compacted every few
	// seconds and without a watch cache, so every watch expires and every
	// informer relists, with objects drifted just before and during it.
	ScenarioCompact = "compact"
	// ScenarioRace has another client set templates and references back
	// while corrections run.
	ScenarioRace = "race"
	// ScenarioFailover runs two replicas with leader election and SIGKILLs
	// the leader while corrections run.
	ScenarioFailover = "failover"
	// ScenarioLossy puts a fault-injecting proxy between the controller and
	// the API server, after a fault-free run of the same fleet.
	ScenarioLossy = "lossy"
	// ScenarioTenants runs the controller under the multi-tenancy lockdown
	// with hostile tenants' releases among the fleet.
	ScenarioTenants = "tenants"
	// ScenarioMemory has tenants rewrite their kubeconfig Secrets and store
	// large-values releases while the controller's peak RSS is sampled.
	ScenarioMemory = "memory"
	// ScenarioSoak drifts, kills and restarts for CHAOS_SOAK_FOR while the
	// controller's memory and goroutines are read (`make soak`; not in
	// AllScenarios).
	ScenarioSoak = "soak"
)

// AllScenarios run, in this order, when CHAOS_SCENARIOS is not set.
var AllScenarios = []string{ScenarioKill, ScenarioRestart, ScenarioCompact, ScenarioRace, ScenarioFailover, ScenarioLossy, ScenarioTenants, ScenarioMemory}

// KnownScenarios are AllScenarios and the soak, which runs only when named.
var KnownScenarios = append(slices.Clone(AllScenarios), ScenarioSoak)

// Config is how the chaos matrix runs, from the CHAOS_* environment
// variables: the sizes of the faults and which scenarios run. The
// harness's timing is each scenario's own (spec.go and the specs).
type Config struct {
	// N is the number of opted-in releases of each scenario's fleet
	// (CHAOS_N, 200; at least 3, one of each case).
	N int
	// Kills is how many times the kill scenario SIGKILLs the controller
	// (CHAOS_KILLS, 20; 0 also keeps the soak from killing it).
	Kills int
	// Restarts is how many times the restart and compact scenarios
	// restart kube-apiserver (CHAOS_RESTARTS, 2).
	Restarts int
	// Rewrites is how many times each tenant of the memory scenario
	// rewrites its kubeconfig Secret (CHAOS_REWRITES, 1000).
	Rewrites int
	// Scenarios are the scenarios run (CHAOS_SCENARIOS, space-separated;
	// all by default).
	Scenarios []string
	// Managers are the scenarios that run with the real Cluster API and
	// Metal3 managers (CHAOS_MANAGERS, space-separated; none by default,
	// `make chaos` names kill and race).
	Managers []string
	// Seed seeds the random fault times (CHAOS_SEED; by default the start
	// time, printed so a run can be repeated).
	Seed int64
	// SoakFor is how long the soak drifts, kills and restarts
	// (CHAOS_SOAK_FOR, 30m).
	SoakFor time.Duration
	// ControllerBin runs this binary instead of building the working tree's
	// (CHAOS_CONTROLLER_BIN).
	ControllerBin string
	// KeepAudit keeps the audit logs of a run whose invariants held
	// (CHAOS_KEEP_AUDIT=1); a failed scenario's is always kept.
	KeepAudit bool
}

// WithManagers reports whether scenario runs with the real managers.
func (c Config) WithManagers(scenario string) bool { return slices.Contains(c.Managers, scenario) }

// ConfigFromEnv reads the configuration from getenv (os.Getenv in the
// command, a map in tests); now seeds the default Seed.
func ConfigFromEnv(getenv func(string) string, now time.Time) (Config, error) {
	c := Config{N: 200, Kills: 20, Restarts: 2, Rewrites: 1000, Scenarios: AllScenarios, Seed: now.UnixNano(), SoakFor: 30 * time.Minute,
		ControllerBin: getenv("CHAOS_CONTROLLER_BIN"), KeepAudit: getenv("CHAOS_KEEP_AUDIT") == "1"}
	var err error
	if c.Scenarios, err = scenarios(getenv, "CHAOS_SCENARIOS", AllScenarios); err != nil {
		return Config{}, err
	}
	if c.Managers, err = scenarios(getenv, "CHAOS_MANAGERS", nil); err != nil {
		return Config{}, err
	}
	ints := []struct {
		name string
		min  int
		into *int
	}{{"CHAOS_N", 3, &c.N}, {"CHAOS_KILLS", 0, &c.Kills}, {"CHAOS_RESTARTS", 0, &c.Restarts}, {"CHAOS_REWRITES", 0, &c.Rewrites}}
	for _, i := range ints {
		v := getenv(i.name)
		if v == "" {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < i.min {
			return Config{}, fmt.Errorf("failed to parse %s %q: want an integer of at least %d", i.name, v, i.min)
		}
		*i.into = n
	}
	if v := getenv("CHAOS_SEED"); v != "" {
		seed, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return Config{}, fmt.Errorf("failed to parse CHAOS_SEED %q: want an integer", v)
		}
		c.Seed = seed
	}
	if err := harness.ParseDurations(getenv, "45m", []harness.NamedDuration{{Name: "CHAOS_SOAK_FOR", Into: &c.SoakFor}}); err != nil {
		return Config{}, err
	}
	return c, nil
}

// scenarios parses the space-separated scenario names of the variable
// name, or returns def when it is not set.
func scenarios(getenv func(string) string, name string, def []string) ([]string, error) {
	v := strings.Fields(getenv(name))
	if len(v) == 0 {
		return def, nil
	}
	for _, s := range v {
		if !slices.Contains(KnownScenarios, s) {
			return nil, fmt.Errorf("failed to parse %s %q: %q is not one of %s", name, getenv(name), s, strings.Join(KnownScenarios, ", "))
		}
	}
	return v, nil
}

// LeaseTimes are the leader-election renew deadline and retry period the
// failover scenario runs with for a lease duration d: two thirds of d and
// two fifteenths (15s: 10s and 2s; Flux's defaults are 35s, 30s and 5s). A
// leader that cannot renew gives up a third of the lease before another
// replica may take it, and the follower tries every retry period.
func LeaseTimes(d time.Duration) (renewDeadline, retryPeriod time.Duration) {
	return d * 2 / 3, d * 2 / 15
}
