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
			g.Expect([]int{c.N, c.Kills, c.Restarts, c.Rewrites}).To(Equal([]int{200, 20, 2, 1000}))
			g.Expect(c.Scenarios).To(Equal([]string{ScenarioKill, ScenarioRestart, ScenarioCompact, ScenarioRace, ScenarioFailover, ScenarioLossy, ScenarioTenants, ScenarioMemory}))
			g.Expect(c.Seed).To(Equal(int64(42)))
			g.Expect(c.SoakFor).To(Equal(30 * time.Minute))
			g.Expect(c.Managers).To(BeEmpty())
			g.Expect(c.WithManagers(ScenarioKill)).To(BeFalse())
			g.Expect(c.KeepAudit).To(BeFalse())
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
		{name: "the reduced CI run", env: map[string]string{"CHAOS_N": "50", "CHAOS_KILLS": "5", "CHAOS_RESTARTS": "1", "CHAOS_REWRITES": "250"},
			check: func(g Gomega, c Config) {
				g.Expect([]int{c.N, c.Kills, c.Restarts, c.Rewrites}).To(Equal([]int{50, 5, 1, 250}))
				g.Expect(largeReleases(c.N)).To(Equal(5))
			}},
		{name: "scenarios picked", env: map[string]string{"CHAOS_SCENARIOS": " race kill "}, check: func(g Gomega, c Config) {
			g.Expect(c.Scenarios).To(Equal([]string{ScenarioRace, ScenarioKill}))
		}},
		{name: "a seed, a binary and kept audit logs", env: map[string]string{"CHAOS_SEED": "7", "CHAOS_CONTROLLER_BIN": "/tmp/old", "CHAOS_KEEP_AUDIT": "1"},
			check: func(g Gomega, c Config) {
				g.Expect(c.Seed).To(Equal(int64(7)))
				g.Expect(c.ControllerBin).To(Equal("/tmp/old"))
				g.Expect(c.KeepAudit).To(BeTrue())
			}},
		{name: "zero kills is allowed", env: map[string]string{"CHAOS_KILLS": "0"}, check: func(g Gomega, c Config) {
			g.Expect(c.Kills).To(BeZero())
		}},
		{name: "unknown scenario", env: map[string]string{"CHAOS_SCENARIOS": "kill partition"}, wantErr: `"partition" is not one of kill, restart, compact, race, failover, lossy`},
		{name: "too few releases", env: map[string]string{"CHAOS_N": "2"}, wantErr: "CHAOS_N"},
		{name: "not a number", env: map[string]string{"CHAOS_KILLS": "many"}, wantErr: "CHAOS_KILLS"},
		{name: "bad duration", env: map[string]string{"CHAOS_SOAK_FOR": "-1s"}, wantErr: "CHAOS_SOAK_FOR"},
		{name: "negative rewrites", env: map[string]string{"CHAOS_REWRITES": "-1"}, wantErr: "CHAOS_REWRITES"},
		{name: "bad seed", env: map[string]string{"CHAOS_SEED": "x"}, wantErr: "CHAOS_SEED"},
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
