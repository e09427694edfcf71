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
	// ScenarioSoak drifts, kills and restarts for cfg.SoakFor while the
	// controller's memory and goroutines are read (`make soak`; not in
	// AllScenarios).
	ScenarioSoak = "soak"
)

// AllScenarios run, in this order, when CHAOS_SCENARIOS is not set.
var AllScenarios = []string{ScenarioKill, ScenarioRestart, ScenarioCompact, ScenarioRace, ScenarioFailover, ScenarioLossy, ScenarioTenants, ScenarioMemory}

// KnownScenarios are AllScenarios and the soak, which runs only when named.
var KnownScenarios = append(slices.Clone(AllScenarios), ScenarioSoak)

// Config is how the chaos matrix runs, from the CHAOS_* environment
// variables.
type Config struct {
	// N is the number of opted-in releases of each scenario's fleet
	// (CHAOS_N, 200; at least 3, one of each case).
	N int
	// Kills is how many times the kill scenario SIGKILLs the controller
	// (CHAOS_KILLS, 20).
	Kills int
	// KillMin and KillMax bound the controller's run time before each kill,
	// drawn uniformly (CHAOS_KILL_MIN 1s, CHAOS_KILL_MAX 10s).
	KillMin, KillMax time.Duration
	// Restarts is how many times the restart and compact scenarios
	// restart kube-apiserver (CHAOS_RESTARTS, 2).
	Restarts int
	// RaceFor is how long the other writer of the race scenario runs
	// (CHAOS_RACE_FOR, 20s).
	RaceFor time.Duration
	// Lease is the failover scenario's --leader-election-lease-duration
	// (CHAOS_LEASE, 15s); the renew deadline and retry period follow from
	// it (LeaseTimes).
	Lease time.Duration
	// FaultRate is the share of requests the lossy scenario's proxy faults
	// (CHAOS_FAULT_RATE, 0.05).
	FaultRate float64
	// Scenarios are the scenarios run (CHAOS_SCENARIOS, space-separated;
	// all by default).
	Scenarios []string
	// Resync is the controller's --resync-interval and every HelmRelease's
	// spec.interval (CHAOS_RESYNC, 30s).
	Resync time.Duration
	// Settle is how long the harness waits after convergence before it
	// checks the invariants, for the passes still in flight
	// (CHAOS_SETTLE, 5s).
	Settle time.Duration
	// ConvergeTimeout bounds the wait for convergence after the faults stop
	// (CHAOS_CONVERGE_TIMEOUT, 10m): a fleet that does not converge in it
	// fails the invariant.
	ConvergeTimeout time.Duration
	// Seed seeds the random fault times (CHAOS_SEED; by default the start
	// time, printed so a run can be repeated).
	Seed int64
	// ControllerBin runs this binary instead of building the working tree's
	// (CHAOS_CONTROLLER_BIN).
	ControllerBin string
	// KeepAudit keeps the audit logs of a run whose invariants held
	// (CHAOS_KEEP_AUDIT=1); a failed scenario's is always kept.
	KeepAudit bool
	// Rewriters is how many tenants of the memory scenario deploy through
	// a kubeconfig Secret and rewrite it (CHAOS_REWRITERS, 4).
	Rewriters int
	// Rewrites is how many times each of them rewrites its kubeconfig
	// Secret (CHAOS_REWRITES, 1000: a hostile tenant that rewrites its
	// kubeconfig in a loop).
	Rewrites int
	// RewriteEvery is the least time between two rewrites of one tenant
	// (CHAOS_REWRITE_EVERY, 25ms), a pace the API server on two shared
	// cores takes besides the controller.
	RewriteEvery time.Duration
	// RewriteCerts has each rewrite carry a new client certificate
	// (CHAOS_REWRITE_CERTS, on; 0 keeps the first one): new TLS
	// credentials make client-go build a new transport, and so a new
	// connection, for each client.
	RewriteCerts bool
	// Large is how many releases of the memory scenario store values and a
	// hook of several hundred KiB (CHAOS_LARGE, 20).
	Large int
	// SoakFor is how long the soak drifts, kills and restarts
	// (CHAOS_SOAK_FOR, 30m).
	SoakFor time.Duration
	// Managers are the scenarios that run with the real Cluster API
	// (core, kubeadm bootstrap, kubeadm control plane) and Metal3 managers
	// and their webhooks on the control plane (CHAOS_MANAGERS,
	// space-separated; none by default, `make chaos` names kill and race):
	// their fleet's data templates are held by claims and CAPM3's
	// finalizer, and those scenarios check the managers' invariants too.
	Managers []string
}

// WithManagers reports whether scenario runs with the real managers.
func (c Config) WithManagers(scenario string) bool { return slices.Contains(c.Managers, scenario) }

// ConfigFromEnv reads the configuration from getenv (os.Getenv in the
// command, a map in tests); now seeds the default Seed.
func ConfigFromEnv(getenv func(string) string, now time.Time) (Config, error) {
	c := Config{N: 200, Kills: 20, KillMin: time.Second, KillMax: 10 * time.Second, Restarts: 2, RaceFor: 20 * time.Second,
		Lease: 15 * time.Second, FaultRate: 0.05, Scenarios: AllScenarios, Resync: 30 * time.Second, Settle: 5 * time.Second, ConvergeTimeout: 10 * time.Minute,
		Seed: now.UnixNano(), ControllerBin: getenv("CHAOS_CONTROLLER_BIN"), KeepAudit: getenv("CHAOS_KEEP_AUDIT") == "1",
		Rewriters: 4, Rewrites: 1000, RewriteEvery: 25 * time.Millisecond, RewriteCerts: getenv("CHAOS_REWRITE_CERTS") != "0", Large: 20,
		SoakFor: 30 * time.Minute}
	if v := strings.Fields(getenv("CHAOS_SCENARIOS")); len(v) > 0 {
		for _, s := range v {
			if !slices.Contains(KnownScenarios, s) {
				return Config{}, fmt.Errorf("failed to parse CHAOS_SCENARIOS %q: %q is not one of %s",
					getenv("CHAOS_SCENARIOS"), s, strings.Join(KnownScenarios, ", "))
			}
		}
		c.Scenarios = v
	}
	for _, s := range strings.Fields(getenv("CHAOS_MANAGERS")) {
		if !slices.Contains(KnownScenarios, s) {
			return Config{}, fmt.Errorf("failed to parse CHAOS_MANAGERS %q: %q is not one of %s",
				getenv("CHAOS_MANAGERS"), s, strings.Join(KnownScenarios, ", "))
		}
		c.Managers = append(c.Managers, s)
	}
	ints := []struct {
		name string
		min  int
		into *int
	}{{"CHAOS_N", 3, &c.N}, {"CHAOS_KILLS", 0, &c.Kills}, {"CHAOS_RESTARTS", 0, &c.Restarts},
		{"CHAOS_REWRITERS", 0, &c.Rewriters}, {"CHAOS_REWRITES", 0, &c.Rewrites}, {"CHAOS_LARGE", 0, &c.Large}}
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
	if err := harness.ParseDurations(getenv, "10s", []harness.NamedDuration{
		{Name: "CHAOS_KILL_MIN", Into: &c.KillMin}, {Name: "CHAOS_KILL_MAX", Into: &c.KillMax}, {Name: "CHAOS_RACE_FOR", Into: &c.RaceFor},
		{Name: "CHAOS_LEASE", Into: &c.Lease}, {Name: "CHAOS_RESYNC", Into: &c.Resync}, {Name: "CHAOS_SETTLE", Into: &c.Settle}, {Name: "CHAOS_CONVERGE_TIMEOUT", Into: &c.ConvergeTimeout},
		{Name: "CHAOS_REWRITE_EVERY", Into: &c.RewriteEvery}, {Name: "CHAOS_SOAK_FOR", Into: &c.SoakFor},
	}); err != nil {
		return Config{}, err
	}
	if v := getenv("CHAOS_FAULT_RATE"); v != "" {
		rate, err := strconv.ParseFloat(v, 64)
		if err != nil || rate < 0 || rate > 1 {
			return Config{}, fmt.Errorf("failed to parse CHAOS_FAULT_RATE %q: want a share between 0 and 1, such as 0.05", v)
		}
		c.FaultRate = rate
	}
	if c.KillMax < c.KillMin {
		return Config{}, fmt.Errorf("failed to parse CHAOS_KILL_MAX %s: it is below CHAOS_KILL_MIN %s", c.KillMax, c.KillMin)
	}
	return c, nil
}

// LeaseTimes are the leader-election renew deadline and retry period the
// failover scenario runs with for a lease duration d: two thirds of d and
// two fifteenths (15s: 10s and 2s; Flux's defaults are 35s, 30s and 5s). A
// leader that cannot renew gives up a third of the lease before another
// replica may take it, and the follower tries every retry period.
func LeaseTimes(d time.Duration) (renewDeadline, retryPeriod time.Duration) {
	return d * 2 / 3, d * 2 / 15
}
