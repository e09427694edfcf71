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
			g.Expect(c.Settle).To(Equal(30*time.Second), "one resync")
			g.Expect(c.KeepAudit).To(BeFalse())
			g.Expect(c.Controllers).To(Equal([]string{"template-drift-controller", "lockdown", "helm-controller"}))
			lockdown := LockdownTarget(c, "bin")
			g.Expect(lockdown.Lockdown).To(BeTrue())
			g.Expect(lockdown.User).NotTo(Equal(AddonTarget(c, "bin").User), "the audit log tells the two apart")
			g.Expect(lockdown.Flags).To(Equal(append(ControllerFlags(c), "--default-service-account=tenant")))
			g.Expect(HelmControllerFlags(c)).To(Equal([]string{"--watch-all-namespaces=true", "--concurrent=4",
				"--requeue-dependency=30s", "--enable-leader-election=false", "--log-level=info"}))
		}},
		{name: "one controller", env: map[string]string{"BENCH_CONTROLLERS": " template-drift-controller ",
			"BENCH_HELM_CONTROLLER_ARGS": "--concurrent=8"}, check: func(g Gomega, c Config) {
			g.Expect(c.Controllers).To(Equal([]string{"template-drift-controller"}))
			g.Expect(HelmControllerFlags(c)).To(HaveLen(6))
			g.Expect(HelmControllerFlags(c)[5]).To(Equal("--concurrent=8"), "after the harness's own, so it wins")
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
		{name: "overrides", env: map[string]string{"BENCH_N": " 50  100 ", "BENCH_RESYNC": "20s", "BENCH_KEEP_AUDIT": "1",
			"BENCH_CONTROLLER_ARGS": "--concurrent=8 --kube-api-qps=100", "BENCH_CONTROLLER_BIN": "/tmp/old",
			"BENCH_CONTROLLER_ENV": "GOGC=50  GOMEMLIMIT=150MiB"}, check: func(g Gomega, c Config) {
			g.Expect(c.ControllerBin).To(Equal("/tmp/old"))
			g.Expect(AddonTarget(c, "/tmp/old").Env).To(Equal([]string{"GOGC=50", "GOMEMLIMIT=150MiB"}))
			g.Expect(c.Sizes).To(Equal([]int{50, 100}))
			g.Expect(c.Window).To(Equal(40*time.Second), "two resyncs of the new interval")
			g.Expect(c.Settle).To(Equal(20*time.Second), "one resync of the new interval")
			g.Expect(c.KeepAudit).To(BeTrue())
			g.Expect(ControllerFlags(c)).To(Equal([]string{"--watch-all-namespaces=true", "--resync-interval=20s",
				"--log-level=info", "--concurrent=8", "--kube-api-qps=100"}))
		}},
		{name: "explicit window", env: map[string]string{"BENCH_WINDOW": "90s"}, check: func(g Gomega, c Config) {
			g.Expect(c.Window).To(Equal(90 * time.Second))
		}},
		{name: "size not a number", env: map[string]string{"BENCH_N": "50 lots"}, wantErr: "BENCH_N"},
		{name: "size too small for the reaction", env: map[string]string{"BENCH_N": "1"}, wantErr: "at least 2"},
		{name: "bad duration", env: map[string]string{"BENCH_SETTLE": "soon"}, wantErr: "BENCH_SETTLE"},
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
