package scale

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/templatedrift/template-drift-controller/test/harness"
)

func TestDerive(t *testing.T) {
	g := NewWithT(t)
	r := Result{N: 10, WindowSeconds: 60, ResyncSeconds: 30, APIServerIdleCPUMsPerSecond: 2,
		Requests: Requests{Total: 220, ByVerb: map[string]int{"get": 200, "list": 20}}}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	start := sample{at: t0, controller: time.Second, apiServer: 2 * time.Second, etcd: 0, reconciles: 100}
	end := sample{at: t0.Add(time.Minute), controller: 1200 * time.Millisecond, apiServer: 2600 * time.Millisecond, etcd: 100 * time.Millisecond, reconciles: 120}

	r.derive(start, end)

	g.Expect(r.RequestsPerHRPerResync).To(Equal(11.0), "220 requests, 10 releases, 2 resyncs")
	g.Expect(r.ByVerbPerHRPerResync).To(Equal(map[string]float64{"get": 10, "list": 1}))
	g.Expect(r.Writes).To(Equal(0))
	g.Expect(r.Upgrades).To(Equal(0))
	g.Expect(r.ReconcilesPerHRPerResync).To(Equal(1.0))
	g.Expect(*r.ControllerCPUPerReconcileMs).To(BeNumerically("~", 10, 1e-9))
	g.Expect(*r.APIServerCPUPerReconcileMs).To(BeNumerically("~", 30, 1e-9))
	g.Expect(*r.EtcdCPUPerReconcileMs).To(BeNumerically("~", 5, 1e-9))
	g.Expect(*r.APIServerCPUAboveIdlePerReconcileMs).To(BeNumerically("~", 24, 1e-9), "2 ms/s for 60 s is 6 ms of each of the 20 reconciles")
}

func TestDeriveWithoutReconciles(t *testing.T) {
	g := NewWithT(t)
	r := Result{N: 10, WindowSeconds: 60, ResyncSeconds: 30, Requests: Requests{ByVerb: map[string]int{},
		ByResource: map[string]int{"create secrets": 2, "patch helmreleases/status": 4}}}

	r.derive(sample{}, sample{})

	g.Expect(r.ControllerCPUPerReconcileMs).To(BeNil())
	g.Expect(r.Upgrades).To(Equal(2), "a Helm upgrade stores a new release Secret")
	var out bytes.Buffer
	g.Expect(WriteTable(&out, []Result{r})).To(Succeed())
	g.Expect(out.String()).To(ContainSubstring(" - "))
	g.Expect(out.String()).To(MatchRegexp(`req/HR/resync\s+get\s+list\s+watch\s+writes`), "the read verbs even when none was made")
}

func TestWriteTable(t *testing.T) {
	g := NewWithT(t)
	ms := 12.34
	runs := []Result{{Controller: TemplateDriftController, N: 50, Fleet: "full", SetupSeconds: 3.2, ConvergenceSeconds: 61.4, RequestsPerHRPerResync: 10.5,
		Requests:             Requests{ByVerb: map[string]int{"list": 1, "get": 9, "watch": 1, "bind": 1}},
		ByVerbPerHRPerResync: map[string]float64{"get": 9.5, "list": 1}, ReconcilesPerHRPerResync: 1,
		ControllerCPUPerReconcileMs: &ms, APIServerCPUPerReconcileMs: &ms, Memory: harness.Memory{RSS: 64 << 20, Peak: 80 << 20},
		Floor: &Floor{Writes: 75, Seconds: 1.5, Ratio: 40.93},
		Addon: &AddonFigures{Shards: 1, Reactions: []Reaction{{HealedSeconds: 0.12}, {HealedSeconds: 0.08}, {HealedSeconds: 29.6}}}},
		// helm-controller: writes on every pass, and no add-on figures.
		{Controller: HelmController, N: 50, Fleet: "full", SetupSeconds: 3.4, ConvergenceSeconds: 4.5, RequestsPerHRPerResync: 21.5,
			ByVerbPerHRPerResync: map[string]float64{"get": 9, "list": 1, "patch": 11.5}, Writes: 45, ReconcilesPerHRPerResync: 1,
			ControllerCPUPerReconcileMs: &ms, APIServerCPUPerReconcileMs: &ms, Memory: harness.Memory{RSS: 74 << 20, Peak: 74 << 20}}}
	var out bytes.Buffer

	g.Expect(WriteTable(&out, runs)).To(Succeed())

	lines := bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n"))
	g.Expect(lines).To(HaveLen(3))
	g.Expect(string(lines[0])).To(MatchRegexp(`^N\s+fleet\s+controller\s+setup\s+converge\s+req/HR/resync\s+get\s+list\s+watch\s+bind\s+writes\s+upgrades\s`))
	g.Expect(string(lines[1])).To(MatchRegexp(`^50\s+full\s+template-drift-controller\s+3.20s\s+61s\s+10.50\s+9.50\s+1.00\s+0.00\s+0.00\s+0\s+0\s+1.00\s+12.3 ms\s+12.3 ms\s+64 MiB\s+1311 KiB\s+80 MiB\s+1\s+1.50s \(40.93×, 75 writes\)\s+0.08s-30s$`))
	g.Expect(string(lines[2])).To(MatchRegexp(`^50\s+full\s+helm-controller\s+3.40s\s+4.50s\s+21.50\s+9.00\s+1.00\s+0.00\s+0.00\s+45\s+0\s+1.00\s.*74 MiB\s+1516 KiB\s+74 MiB\s+1\s+-\s+n/a$`))
}

// TestWriteJSON: the common figures are flat, each measurement's own in
// its section, absent when it was not measured.
func TestWriteJSON(t *testing.T) {
	g := NewWithT(t)
	path := filepath.Join(t.TempDir(), "bench", "run.json")
	rep := Report{Cores: 2, Runs: []Result{
		{Controller: TemplateDriftController, N: 50, Addon: &AddonFigures{Shards: 1, Reactions: []Reaction{{HealedSeconds: 0.3}}}, Floor: &Floor{Writes: 75}},
		{Controller: HelmController, N: 50, Upgrades: 0},
	}}

	g.Expect(rep.WriteJSON(path)).To(Succeed())

	b, err := os.ReadFile(path)
	g.Expect(err).NotTo(HaveOccurred())
	var back struct {
		Runs []map[string]any `json:"runs"`
	}
	g.Expect(json.Unmarshal(b, &back)).To(Succeed())
	g.Expect(back.Runs).To(HaveLen(2))
	addon, helm := back.Runs[0], back.Runs[1]
	for _, key := range []string{"n", "fleet", "requestsPerHrPerResync", "writes", "upgrades", "controllerCpuPerReconcileMs", "memory"} {
		g.Expect(addon).To(HaveKey(key))
		g.Expect(helm).To(HaveKey(key))
	}
	g.Expect(addon["addon"]).To(HaveKeyWithValue("reactions", HaveLen(1)))
	g.Expect(addon["floor"]).To(HaveKeyWithValue("writes", BeNumerically("==", 75)))
	g.Expect(helm).NotTo(HaveKey("addon"), "helm-controller has no add-on figures")
	g.Expect(helm).NotTo(HaveKey("floor"))
	g.Expect(string(b)).NotTo(ContainSubstring(`"failure"`))
}
