package chaos

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

func TestConfigFromEnv(t *testing.T) {
	now := time.Unix(0, 42)
	tests := []struct {
		name string
		// env is the environment; unset variables are empty.
		env map[string]string
		// check inspects the parsed configuration.
		check func(g Gomega, c Config)
		// wantErr is a substring of the error, or empty for none.
		wantErr string
	}{
		{name: "defaults", check: func(g Gomega, c Config) {
			g.Expect(c.N).To(Equal(200))
			g.Expect(c.Kills).To(Equal(20))
			g.Expect(c.Restarts).To(Equal(2))
			g.Expect(c.Scenarios).To(Equal([]string{ScenarioKill, ScenarioRestart, ScenarioCompact, ScenarioRace, ScenarioFailover, ScenarioLossy, ScenarioTenants, ScenarioMemory}))
			g.Expect(c.Lease).To(Equal(15 * time.Second))
			g.Expect(c.FaultRate).To(Equal(0.05))
			g.Expect(c.KillMin).To(Equal(time.Second))
			g.Expect(c.KillMax).To(Equal(10 * time.Second))
			g.Expect(c.Seed).To(Equal(int64(42)))
			g.Expect([]int{c.Rewriters, c.Rewrites, c.Large}).To(Equal([]int{4, 1000, 20}))
			g.Expect(c.RewriteEvery).To(Equal(25 * time.Millisecond))
			g.Expect(c.RewriteCerts).To(BeTrue())
			g.Expect(c.SoakFor).To(Equal(30 * time.Minute))
			g.Expect(c.Managers).To(BeEmpty())
			g.Expect(c.WithManagers(ScenarioKill)).To(BeFalse())
		}},
		{name: "the real managers for two scenarios", env: map[string]string{"CHAOS_MANAGERS": " kill race"},
			check: func(g Gomega, c Config) {
				g.Expect(c.Managers).To(Equal([]string{ScenarioKill, ScenarioRace}))
				g.Expect([]bool{c.WithManagers(ScenarioKill), c.WithManagers(ScenarioRace), c.WithManagers(ScenarioRestart)}).To(Equal([]bool{true, true, false}))
			}},
		{name: "the real managers for an unknown scenario", env: map[string]string{"CHAOS_MANAGERS": "kill nap"}, wantErr: `CHAOS_MANAGERS "kill nap": "nap" is not one of`},
		{name: "the soak, named", env: map[string]string{"CHAOS_SCENARIOS": "soak", "CHAOS_N": "300", "CHAOS_SOAK_FOR": "45m"},
			check: func(g Gomega, c Config) {
				g.Expect(c.Scenarios).To(Equal([]string{ScenarioSoak}))
				g.Expect(c.N).To(Equal(300))
				g.Expect(c.SoakFor).To(Equal(45 * time.Minute))
			}},
		{name: "the memory scenario's hostile input", env: map[string]string{"CHAOS_REWRITERS": "2", "CHAOS_REWRITES": "50", "CHAOS_LARGE": "0", "CHAOS_REWRITE_EVERY": "100ms", "CHAOS_REWRITE_CERTS": "0"},
			check: func(g Gomega, c Config) {
				g.Expect(c.RewriteCerts).To(BeFalse())
				g.Expect([]int{c.Rewriters, c.Rewrites, c.Large}).To(Equal([]int{2, 50, 0}))
				g.Expect(c.RewriteEvery).To(Equal(100 * time.Millisecond))
			}},
		{name: "the reduced CI run", env: map[string]string{"CHAOS_N": "50", "CHAOS_KILLS": "5", "CHAOS_RESTARTS": "1"},
			check: func(g Gomega, c Config) {
				g.Expect([]int{c.N, c.Kills, c.Restarts}).To(Equal([]int{50, 5, 1}))
			}},
		{name: "scenarios picked", env: map[string]string{"CHAOS_SCENARIOS": " race kill "}, check: func(g Gomega, c Config) {
			g.Expect(c.Scenarios).To(Equal([]string{ScenarioRace, ScenarioKill}))
		}},
		{name: "durations and seed", env: map[string]string{"CHAOS_KILL_MIN": "2s", "CHAOS_KILL_MAX": "3s", "CHAOS_SEED": "7", "CHAOS_RACE_FOR": "1m"},
			check: func(g Gomega, c Config) {
				g.Expect([]time.Duration{c.KillMin, c.KillMax, c.RaceFor}).To(Equal([]time.Duration{2 * time.Second, 3 * time.Second, time.Minute}))
				g.Expect(c.Seed).To(Equal(int64(7)))
			}},
		{name: "the new scenarios, a lease and a fault rate", env: map[string]string{"CHAOS_SCENARIOS": "failover lossy", "CHAOS_LEASE": "30s", "CHAOS_FAULT_RATE": "0.1"},
			check: func(g Gomega, c Config) {
				g.Expect(c.Scenarios).To(Equal([]string{ScenarioFailover, ScenarioLossy}))
				g.Expect(c.Lease).To(Equal(30 * time.Second))
				g.Expect(c.FaultRate).To(Equal(0.1))
			}},
		{name: "no faults is allowed", env: map[string]string{"CHAOS_FAULT_RATE": "0"}, check: func(g Gomega, c Config) {
			g.Expect(c.FaultRate).To(BeZero())
		}},
		{name: "zero kills is allowed", env: map[string]string{"CHAOS_KILLS": "0"}, check: func(g Gomega, c Config) {
			g.Expect(c.Kills).To(BeZero())
		}},
		{name: "unknown scenario", env: map[string]string{"CHAOS_SCENARIOS": "kill partition"}, wantErr: `"partition" is not one of kill, restart, compact, race, failover, lossy`},
		{name: "a fault rate above 1", env: map[string]string{"CHAOS_FAULT_RATE": "5"}, wantErr: "CHAOS_FAULT_RATE"},
		{name: "a fault rate that is not a number", env: map[string]string{"CHAOS_FAULT_RATE": "5%"}, wantErr: "CHAOS_FAULT_RATE"},
		{name: "bad lease", env: map[string]string{"CHAOS_LEASE": "0s"}, wantErr: "CHAOS_LEASE"},
		{name: "too few releases", env: map[string]string{"CHAOS_N": "2"}, wantErr: "CHAOS_N"},
		{name: "not a number", env: map[string]string{"CHAOS_KILLS": "many"}, wantErr: "CHAOS_KILLS"},
		{name: "bad duration", env: map[string]string{"CHAOS_SETTLE": "-1s"}, wantErr: "CHAOS_SETTLE"},
		{name: "negative rewrites", env: map[string]string{"CHAOS_REWRITES": "-1"}, wantErr: "CHAOS_REWRITES"},
		{name: "large releases not a number", env: map[string]string{"CHAOS_LARGE": "lots"}, wantErr: "CHAOS_LARGE"},
		{name: "no pause between rewrites", env: map[string]string{"CHAOS_REWRITE_EVERY": "0s"}, wantErr: "CHAOS_REWRITE_EVERY"},
		{name: "bad seed", env: map[string]string{"CHAOS_SEED": "x"}, wantErr: "CHAOS_SEED"},
		{name: "max below min", env: map[string]string{"CHAOS_KILL_MIN": "5s", "CHAOS_KILL_MAX": "1s"}, wantErr: "below CHAOS_KILL_MIN"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			c, err := ConfigFromEnv(func(k string) string { return tt.env[k] }, now)
			if tt.wantErr != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tt.wantErr)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			tt.check(g, c)
		})
	}
}
