package scale

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

func TestConfigFromEnv(t *testing.T) {
	tests := []struct {
		name string
		// env is the environment; unset variables are "".
		env map[string]string
		// check inspects the configuration read.
		check func(g Gomega, c Config)
		// wantErr is a substring of the error, or "" for none.
		wantErr string
	}{
		{name: "defaults", env: map[string]string{}, check: func(g Gomega, c Config) {
			g.Expect(c.Sizes).To(Equal([]int{100, 300, 1000}))
			g.Expect(c.Resync).To(Equal(30 * time.Second))
			g.Expect(c.Window).To(Equal(time.Minute), "two resyncs")
			g.Expect(settle).To(Equal(c.Resync), "one resync")
			g.Expect(c.KeepAudit).To(BeFalse())
			g.Expect(c.Floor).To(BeTrue())
			g.Expect(c.Controllers).To(Equal([]string{"template-drift-controller", "lockdown", "helm-controller"}))
			addon := Addon{Bin: "bin", Flags: ControllerFlags(c)}
			lockdown := addon.lockdownProcess()
			g.Expect(lockdown.name).To(Equal(Lockdown))
			g.Expect(lockdown.user).NotTo(Equal(addon.process().user), "the audit log tells the two apart")
			g.Expect(lockdown.flags).To(Equal(append(ControllerFlags(c), "--default-service-account=tenant")))
			g.Expect(addon.Flags).To(Equal(ControllerFlags(c)), "the lockdown's flag is its own")
			g.Expect(HelmControllerFlags()).To(Equal([]string{"--watch-all-namespaces=true", "--concurrent=4",
				"--requeue-dependency=30s", "--enable-leader-election=false", "--log-level=info"}))
		}},
		{name: "one controller", env: map[string]string{"BENCH_CONTROLLERS": " template-drift-controller "}, check: func(g Gomega, c Config) {
			g.Expect(c.Controllers).To(Equal([]string{"template-drift-controller"}))
		}},
		{name: "unknown controller", env: map[string]string{"BENCH_CONTROLLERS": "helm-controller kustomize-controller"}, wantErr: "kustomize-controller"},
		{name: "fleets", env: map[string]string{"BENCH_FLEETS": " kubeadm-metal3  capi-locked "}, check: func(g Gomega, c Config) {
			g.Expect(c.Fleets).To(HaveLen(2))
			g.Expect(c.Fleets[0].Name).To(Equal("kubeadm-metal3"))
			g.Expect(c.Fleets[1].Name).To(Equal("capi-locked"))
		}},
		{name: "the full fleet by default", env: map[string]string{}, check: func(g Gomega, c Config) {
			g.Expect(c.Fleets).To(HaveLen(1))
			g.Expect(c.Fleets[0].Name).To(Equal("full"))
			g.Expect(c.Fleets[0].Omit).To(BeEmpty())
			g.Expect(c.Shards).To(Equal(1), "one process")
		}},
		{name: "unknown fleet", env: map[string]string{"BENCH_FLEETS": "full vsphere"}, wantErr: `unknown fleet "vsphere"`},
		{name: "shards", env: map[string]string{"BENCH_SHARDS": "4"}, check: func(g Gomega, c Config) {
			g.Expect(c.Shards).To(Equal(4))
		}},
		{name: "no shards", env: map[string]string{"BENCH_SHARDS": "0"}, wantErr: `BENCH_SHARDS "0"`},
		{name: "overrides", env: map[string]string{"BENCH_N": " 50  100 ", "BENCH_KEEP_AUDIT": "1", "BENCH_FLOOR": "0",
			"BENCH_CONTROLLER_ARGS": "--concurrent=8 --kube-api-qps=100", "BENCH_CONTROLLER_BIN": "/tmp/old",
			"BENCH_CONTROLLER_ENV": "GOGC=50  GOMEMLIMIT=150MiB", "BENCH_CPU_PROFILE": "25s"}, check: func(g Gomega, c Config) {
			g.Expect(c.ControllerBin).To(Equal("/tmp/old"))
			g.Expect(c.ControllerEnv).To(Equal([]string{"GOGC=50", "GOMEMLIMIT=150MiB"}))
			g.Expect(c.Sizes).To(Equal([]int{50, 100}))
			g.Expect(c.KeepAudit).To(BeTrue())
			g.Expect(c.Floor).To(BeFalse())
			g.Expect(c.CPUProfile).To(Equal(25 * time.Second))
			g.Expect(ControllerFlags(c)).To(Equal([]string{"--watch-all-namespaces=true", "--resync-interval=30s",
				"--log-level=info", "--rollouts=allow", "--concurrent=8", "--kube-api-qps=100"}))
		}},
		{name: "explicit window", env: map[string]string{"BENCH_WINDOW": "90s"}, check: func(g Gomega, c Config) {
			g.Expect(c.Window).To(Equal(90 * time.Second))
		}},
		{name: "a removed variable fails the run", env: map[string]string{"BENCH_RESYNC": "20s"}, wantErr: "BENCH_RESYNC is no longer read"},
		{name: "size not a number", env: map[string]string{"BENCH_N": "50 lots"}, wantErr: "BENCH_N"},
		{name: "size too small for the reaction", env: map[string]string{"BENCH_N": "1"}, wantErr: "at least 2"},
		{name: "bad duration", env: map[string]string{"BENCH_WINDOW": "soon"}, wantErr: "BENCH_WINDOW"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			c, err := ConfigFromEnv(func(k string) string { return tt.env[k] })
			if tt.wantErr != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tt.wantErr)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			tt.check(g, c)
		})
	}
}

// TestControllerFlagsForChaos: the chaos matrix runs the add-on with its
// own resync and no other flag of the benchmark's.
func TestControllerFlagsForChaos(t *testing.T) {
	g := NewWithT(t)
	g.Expect(ControllerFlags(Config{Resync: 20 * time.Second})).To(Equal([]string{"--watch-all-namespaces=true", "--resync-interval=20s", "--log-level=info", "--rollouts=allow"}))
}
