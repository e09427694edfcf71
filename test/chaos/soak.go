package chaos

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/test/harness"
	"github.com/templatedrift/template-drift-controller/test/scale"
)

// InvHealed is the soak's invariant: every drift it wrote was corrected
// within soakHealTimeout.
const InvHealed = "healed"

// The soak's pace: a drift every few seconds, a SIGKILL of the controller
// every tenth to fifth of the soak (3 to 6 minutes of 30), one API server
// restart halfway; a reading of the controller every 10 s, each process's
// first minute left out of the slopes.
const (
	soakDriftLeast, soakDriftMost = time.Second, 5 * time.Second
	soakSampleEvery               = 10 * time.Second
	soakWarmup                    = time.Minute
	// soakHealTimeout bounds the wait for one drift's correction.
	soakHealTimeout = 5 * time.Minute
	// healPoll is how often the drifts not healed yet are read: the heal
	// times' resolution.
	healPoll = 200 * time.Millisecond
)

// SoakFigures are the soak's figures: what it injected, the heal times of
// its drifts, and the controller's trends.
type SoakFigures struct {
	ForSeconds float64   `json:"forSeconds"`
	Kills      int       `json:"kills"`
	Restarts   int       `json:"restarts"`
	Heal       HealTimes `json:"heal"`
	// RSS, Heap (live, after a collection), HeapInuse (the heap's spans
	// in use then) and Goroutines are the slopes within each controller
	// process, per hour.
	RSS       Slope `json:"rss"`
	Heap      Slope `json:"heap"`
	HeapInuse Slope `json:"heapInuse"`
	// Profiled is the slope of the live heap the heap profiles estimate.
	Profiled   Slope `json:"profiled"`
	Goroutines Slope `json:"goroutines"`
	// Processes are each process's own trend.
	Processes []ProcessTrend `json:"processes"`
	Samples   []SoakSample   `json:"samples"`
}

// soakDrift is one drift written, until it is healed.
type soakDrift struct {
	target raceTarget
	url    string
	at     time.Time
}

// soakProcess is the controller process the sampler reads.
type soakProcess struct {
	mu          sync.Mutex
	pid         int
	incarnation int
	started     time.Time
}

func (p *soakProcess) set(pid int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pid != 0 {
		p.incarnation++
	}
	p.pid, p.started = pid, time.Now()
}

func (p *soakProcess) get() (pid, incarnation int, started time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pid, p.incarnation, p.started
}

// SoakInput is the soak's.
type SoakInput struct {
	Input
	// For is how long the soak drifts, kills and restarts.
	For time.Duration
	// Kills SIGKILLs and restarts the controller every tenth to fifth of
	// For.
	Kills bool
}

// SoakSpec drifts a random workers' or control plane's
// Metal3MachineTemplate of an in-place release every few seconds to an
// image server no correction has met, for in.For, SIGKILLs and restarts
// the controller every tenth to fifth of it (with in.Kills) and restarts
// kube-apiserver once halfway, while it reads the controller's memory and
// goroutines every 10 s and times the correction of each drift. Besides
// every scenario's invariants and the other writer's, every drift must be
// healed within soakHealTimeout.
func SoakSpec(ctx context.Context, in SoakInput) (res Result, err error) {
	d := newDrifts()
	w := newWorld(in.Input, ScenarioSoak, worldOptions{controllerEnv: []string{soakProfileRate}})
	defer func() { w.stop(err) }()
	if err := w.setUp(ctx, nil); err != nil {
		return w.res, err
	}
	if err := w.step("inject the fault", func() error { return soak(ctx, w, d, in) }); err != nil {
		return w.res, err
	}
	w.faultsStopped(ctx)
	return w.conclude(ctx, checks{}, func(writes []Write) error {
		w.res.Checked = append(w.res.Checked, InvHealed)
		return d.check(ctx, w, writes)
	})
}

// soak is the soak's schedule: drifts, kills, the restart, the samples.
func soak(ctx context.Context, r *world, d *drifts, in SoakInput) error { //nolint:funlen // the soak's schedule (drifts, kills, the restart, the samples) reads best as one loop
	killMin, killMax := in.For/10, in.For/5
	kills := fmt.Sprintf("a SIGKILL every %s-%s", killMin, killMax)
	if !in.Kills {
		kills = "no SIGKILL"
	}
	r.res.Fault = fmt.Sprintf("%s: a drift every %s-%s, %s, one kube-apiserver restart", in.For, soakDriftLeast, soakDriftMost, kills)
	var targets []raceTarget
	for i := range r.in.N {
		if ns := scale.Namespace(i); r.fleet.Cases[ns] == CaseInPlace {
			for _, name := range []string{"mgmt-md0", "mgmt-cp"} {
				targets = append(targets, raceTarget{key: ObjectKey{ns, m3mtGVK.Kind, name}, gvk: m3mtGVK})
			}
		}
	}
	if len(targets) == 0 {
		return fmt.Errorf("the soak's fleet of %d has no in-place release to drift", r.in.N)
	}
	fig := &SoakFigures{}
	r.res.Soak = fig
	proc := &soakProcess{}
	proc.set(r.controller.PID())
	sampled := make(chan []SoakSample, 1)
	sctx, stopSampling := context.WithCancel(ctx)
	go func() { sampled <- sampleSoak(sctx, r, proc) }()

	start := time.Now()
	deadline, nextKill, restartAt := start.Add(in.For), start.Add(r.between(killMin, killMax)), start.Add(in.For/2)
	pending := map[ObjectKey]soakDrift{}
	var healed []float64
	lastPoll := time.Now()
	for cycle := 0; time.Now().Before(deadline); cycle++ {
		next := time.Now().Add(r.between(soakDriftLeast, soakDriftMost))
		for time.Now().Before(next) {
			if err := harness.Sleep(ctx, healPoll-time.Since(lastPoll)); err != nil {
				stopSampling()
				return err
			}
			healed = append(healed, healedOf(ctx, r, pending)...)
			lastPoll = time.Now()
		}
		switch now := time.Now(); {
		case in.Kills && now.After(nextKill):
			fig.Kills++
			r.in.Logf("%s: killed the controller (%d)", r.name, fig.Kills)
			if err := r.restartController(); err != nil {
				stopSampling()
				return err
			}
			proc.set(r.controller.PID())
			nextKill = now.Add(r.between(killMin, killMax))
		case fig.Restarts == 0 && now.After(restartAt):
			if err := r.env.RestartAPIServer(); err != nil {
				stopSampling()
				return err
			}
			fig.Restarts++
			r.in.Logf("%s: restarted kube-apiserver in %s", r.name, time.Since(now).Round(time.Millisecond))
		}
		if err := driftOnce(ctx, r, d, targets, cycle, pending); err != nil {
			stopSampling()
			return err
		}
	}
	// The last drifts are given their time.
	for end := time.Now().Add(soakHealTimeout); len(pending) > 0 && time.Now().Before(end); {
		if err := harness.Sleep(ctx, healPoll); err != nil {
			stopSampling()
			return err
		}
		healed = append(healed, healedOf(ctx, r, pending)...)
	}
	stopSampling()
	fig.Samples = <-sampled
	fig.ForSeconds = time.Since(start).Seconds()
	fig.Heal = Distribution(len(healed)+len(pending), healed)
	for _, d := range pending {
		r.res.violate(InvHealed, fmt.Sprintf("%s: drifted to %s at %s, not corrected %s later", d.target.key, d.url, d.at.Format(time.TimeOnly), soakHealTimeout))
	}
	fig.RSS = WithinSlope(fig.Samples, soakWarmup, func(s SoakSample) float64 { return float64(s.RSSBytes) })
	fig.Heap = WithinSlope(fig.Samples, soakWarmup, func(s SoakSample) float64 { return float64(s.HeapBytes) })
	fig.Profiled = WithinSlope(fig.Samples, soakWarmup, func(s SoakSample) float64 { return float64(s.ProfiledBytes) })
	fig.HeapInuse = WithinSlope(fig.Samples, soakWarmup, func(s SoakSample) float64 { return float64(s.HeapInuseBytes) })
	fig.Goroutines = WithinSlope(fig.Samples, soakWarmup, func(s SoakSample) float64 { return float64(s.Goroutines) })
	fig.Processes = ProcessTrends(fig.Samples, soakWarmup)
	return nil
}

// driftOnce drifts one target that has no drift pending, recording it for
// the heal times and the lost-update check.
func driftOnce(ctx context.Context, r *world, d *drifts, targets []raceTarget, cycle int, pending map[ObjectKey]soakDrift) error {
	t := targets[r.rng.IntN(len(targets))]
	if _, busy := pending[t.key]; busy {
		return nil
	}
	t.setBack = freshImage(cycle)
	ok, err := setBack(ctx, r.env.Client, t)
	if err != nil {
		return nil //nolint:nilerr // the API server may be restarting: drift another time
	}
	if !ok {
		return nil
	}
	at := time.Now()
	url := driftedURL(t)
	pending[t.key] = soakDrift{target: t, url: url, at: at}
	d.record(t)
	return nil
}

// driftedURL is the image URL freshImage set on t.
func driftedURL(t raceTarget) string {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	t.setBack(u)
	url, _, _ := unstructured.NestedString(u.Object, append(imagePath, "url")...)
	return url
}

// healedOf reads each pending drift's object and returns the heal times of
// those no longer at the drifted value, which it removes from pending.
func healedOf(ctx context.Context, r *world, pending map[ObjectKey]soakDrift) []float64 {
	var out []float64
	for k, d := range pending {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(d.target.gvk)
		if err := r.env.Client.Get(ctx, client.ObjectKey{Namespace: k.Namespace, Name: k.Name}, u); err != nil {
			continue // the API server may be restarting: read it again next time
		}
		if url, _, _ := unstructured.NestedString(u.Object, append(imagePath, "url")...); url != d.url {
			out = append(out, time.Since(d.at).Seconds())
			delete(pending, k)
		}
	}
	return out
}

// sampleSoak reads the controller every soakSampleEvery until ctx ends:
// RSS from /proc, the live heap and goroutines from its metrics after a
// collection. A reading that fails (the process just killed) is skipped.
func sampleSoak(ctx context.Context, r *world, proc *soakProcess) []SoakSample {
	var out []SoakSample
	first := map[int]bool{}
	t := time.NewTicker(soakSampleEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return out
		case <-t.C:
		}
		pid, inc, started := proc.get()
		m, err := harness.ReadMemory(pid)
		if err != nil {
			continue
		}
		addr, err := metricsAddr(pid)
		if err != nil {
			continue
		}
		// Each process's heap profiles: the last, and the first after its
		// warm-up, whose difference (go tool pprof -base) shows what grew.
		profile := filepath.Join(r.in.Dir, fmt.Sprintf("heap-soak-%d-last.pb.gz", inc))
		if since := time.Since(started); since >= soakWarmup && !first[inc] {
			first[inc], profile = true, filepath.Join(r.in.Dir, fmt.Sprintf("heap-soak-%d-first.pb.gz", inc))
		}
		g, err := scrapeAfterGC(ctx, addr, profile)
		if err != nil {
			continue
		}
		profiled, err := ProfiledLiveBytes(profile)
		if err != nil {
			r.in.Logf("%s: %v", r.name, err)
		}
		out = append(out, SoakSample{At: time.Now(), Incarnation: inc, Since: time.Since(started), RSSBytes: m.RSS,
			HeapBytes: int64(g[heapAlloc]), HeapInuseBytes: int64(g[heapInuse]), ProfiledBytes: profiled, Goroutines: int(g[goroutines])})
	}
}

// soakProfileRate has the soak's controller sample one allocation per
// 64 KiB in its heap profiles instead of Go's 512 KiB: the growth the soak
// looks for is a megabyte or two, which the default rate cannot tell from
// sampling noise.
const soakProfileRate = "GODEBUG=memprofilerate=65536"

// metricsAddr is the --metrics-addr of process pid.
func metricsAddr(pid int) (string, error) {
	cmdline, err := os.ReadFile(filepath.Join("/proc", fmt.Sprint(pid), "cmdline"))
	if err != nil {
		return "", err
	}
	if addr := flagValue(cmdline, "--metrics-addr"); addr != "" {
		return addr, nil
	}
	return "", fmt.Errorf("process %d has no --metrics-addr", pid)
}

// printSoak writes, under the matrix, the soak's heal times and trends.
func printSoak(w io.Writer, results []Result) {
	for _, r := range results {
		f := r.Soak
		if f == nil {
			continue
		}
		h := f.Heal
		fmt.Fprintf(w, "\n%s: %s, %d kills, %d API server restarts; %d drifts, %d healed: p50 %.2fs, p90 %.2fs, p99 %.2fs, max %.2fs (%d under 1 s, %d under 10 s)\n",
			r.Scenario, (time.Duration(f.ForSeconds) * time.Second).Round(time.Second), f.Kills, f.Restarts, h.Drifts, h.Healed, h.P50, h.P90, h.P99, h.Max, h.Under1s, h.Under10s)
		fmt.Fprintf(w, "%s: slopes within each process (%d samples of %d processes, each process's first %s left out): RSS %+.2f MiB/h, live heap %+.2f MiB/h (by the heap profiles %+.2f MiB/h), heap in use %+.2f MiB/h, goroutines %+.1f/h\n",
			r.Scenario, f.RSS.Samples, f.RSS.Processes, soakWarmup, f.RSS.PerHour/(1<<20), f.Heap.PerHour/(1<<20), f.Profiled.PerHour/(1<<20), f.HeapInuse.PerHour/(1<<20), f.Goroutines.PerHour)
		for _, p := range f.Processes {
			fmt.Fprintf(w, "%s: process %d: %d samples, live heap %.1f → %.1f MiB, %+.1f MiB/h (profiled %.1f → %.1f MiB, %+.1f MiB/h); heap in use %.1f → %.1f MiB, %+.1f MiB/h; RSS %+.1f MiB/h\n", r.Scenario, p.Incarnation, p.Samples,
				float64(p.HeapFirst)/(1<<20), float64(p.HeapLast)/(1<<20), p.HeapPerHour/(1<<20),
				float64(p.ProfiledFirst)/(1<<20), float64(p.ProfiledLast)/(1<<20), p.ProfiledPerHour/(1<<20),
				float64(p.HeapInuseFirst)/(1<<20), float64(p.HeapInuseLast)/(1<<20), p.HeapInusePerHour/(1<<20), p.RSSPerHour/(1<<20))
		}
	}
}
