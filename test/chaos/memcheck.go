package chaos

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"

	"github.com/templatedrift/template-drift-controller/internal/testenv"
	"github.com/templatedrift/template-drift-controller/test/harness"
)

// check checks the memory scenario's own invariant, bounded-memory, and
// records the figures after convergence.
func (mr *memoryRun) check(ctx context.Context) error {
	w := mr.w
	w.res.Checked = append(w.res.Checked, InvBoundedMemory)
	m := mr.fig
	pid := w.controller.PID()
	if mr.sampler != nil {
		sm := mr.sampler.Stop()
		mr.sampler = nil
		m.PeakSampledRSSBytes, m.PeakSockets, m.Samples = sm.RSS, sm.Sockets, sm.Samples
	}
	w.samplePeak()
	m.After = memoryPoint(ctx, w, pid, "after")
	clients, err := countRequests(w.auditLog, ControllerUser, pingPath)
	if err != nil {
		return err
	}
	m.ClientsBuilt = clients
	limit, err := chartMemoryLimit()
	if err != nil {
		return err
	}
	m.LimitBytes = limit
	if w.res.PeakRSSBytes == 0 {
		w.res.violate(InvBoundedMemory, "the controller's peak RSS could not be read")
	} else if w.res.PeakRSSBytes >= limit/2 {
		w.res.violate(InvBoundedMemory, fmt.Sprintf("peak RSS %d MiB, not under half the chart's default memory limit (%d MiB)",
			w.res.PeakRSSBytes>>20, limit>>20))
	}
	w.in.Logf("%s: RSS %d → %d MiB, heap in use %d → %d MiB (live %d → %d MiB), goroutines %d → %d, sockets %d → %d; peak RSS %d MiB (sampled %d MiB), %d clients built for %d rewrites",
		w.name, m.Before.RSSBytes>>20, m.After.RSSBytes>>20, m.Before.HeapInuseBytes>>20, m.After.HeapInuseBytes>>20,
		m.Before.HeapAllocBytes>>20, m.After.HeapAllocBytes>>20,
		m.Before.Goroutines, m.After.Goroutines, m.Before.Sockets, m.After.Sockets, w.res.PeakRSSBytes>>20, m.PeakSampledRSSBytes>>20, clients, m.Rewrites)
	return nil
}

// chartMemoryLimit reads the chart's default resources.limits.memory.
func chartMemoryLimit() (int64, error) {
	root, err := testenv.RepoRoot()
	if err != nil {
		return 0, err
	}
	b, err := os.ReadFile(filepath.Join(root, chartValues))
	if err != nil {
		return 0, fmt.Errorf("failed to read the chart's values: %w", err)
	}
	return memoryLimit(b)
}

// memoryLimit parses resources.limits.memory from a chart's values.
func memoryLimit(values []byte) (int64, error) {
	var v struct {
		Resources struct {
			Limits struct {
				Memory string `json:"memory"`
			} `json:"limits"`
		} `json:"resources"`
	}
	if err := yaml.Unmarshal(values, &v); err != nil {
		return 0, fmt.Errorf("failed to parse the chart's values: %w", err)
	}
	if v.Resources.Limits.Memory == "" {
		return 0, errors.New("failed to find resources.limits.memory in the chart's values")
	}
	q, err := resource.ParseQuantity(v.Resources.Limits.Memory)
	if err != nil {
		return 0, fmt.Errorf("failed to parse resources.limits.memory %q of the chart's values: %w", v.Resources.Limits.Memory, err)
	}
	if q.Value() <= 0 {
		return 0, fmt.Errorf("failed to parse resources.limits.memory %q of the chart's values: not a positive size", v.Resources.Limits.Memory)
	}
	return q.Value(), nil
}

// memoryPoint reads the controller's memory now: its RSS, its sockets, and
// from its metrics endpoint, after a garbage collection that its pprof
// handler runs, its heap and goroutines; the heap profile goes to
// heap-<name>.pb.gz in the run's folder, to tell what holds the heap (go
// tool pprof). What cannot be read stays 0.
func memoryPoint(ctx context.Context, w *world, pid int, name string) MemoryPoint {
	var p MemoryPoint
	if m, err := harness.ReadMemory(pid); err == nil {
		p.RSSBytes = m.RSS
	}
	p.Sockets = harness.Sockets(pid)
	cmdline, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	addr := flagValue(cmdline, "--metrics-addr")
	if err != nil || addr == "" {
		w.in.Logf("%s: cannot find the controller's metrics address: %v", w.name, err)
		return p
	}
	g, err := scrapeAfterGC(ctx, addr, filepath.Join(w.in.Dir, "heap-"+name+".pb.gz"))
	if err != nil {
		w.in.Logf("%s: %v", w.name, err)
		return p
	}
	p.HeapInuseBytes, p.HeapAllocBytes, p.Goroutines = int64(g[heapInuse]), int64(g[heapAlloc]), int(g[goroutines])
	return p
}

// The Go collector's gauges the memory scenario reports.
const (
	heapInuse  = "go_memstats_heap_inuse_bytes"
	heapAlloc  = "go_memstats_heap_alloc_bytes"
	goroutines = "go_goroutines"
)

// scrapeAfterGC has the controller at addr run a garbage collection (its
// heap profile with gc=1, which Flux's pprof handlers serve on the metrics
// endpoint), so that the heap is the live heap and not the garbage of the
// last passes, writes the profile to profile, then scrapes its metrics for
// the gauges reported.
func scrapeAfterGC(ctx context.Context, addr, profile string) (map[string]float64, error) {
	c := &http.Client{Timeout: 10 * time.Second}
	get := func(path string) (*http.Response, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+path, nil)
		if err != nil {
			return nil, err
		}
		resp, err := c.Do(req)
		if err != nil {
			return nil, fmt.Errorf("failed to read the controller's %s: %w", path, err)
		}
		if resp.StatusCode != http.StatusOK {
			resp.Body.Close()
			return nil, fmt.Errorf("failed to read the controller's %s: HTTP %d", path, resp.StatusCode)
		}
		return resp, nil
	}
	resp, err := get("/debug/pprof/heap?gc=1")
	if err != nil {
		return nil, err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("failed to read the controller's heap profile: %w", err)
	}
	if err := os.WriteFile(profile, b, 0o644); err != nil {
		return nil, err
	}
	if resp, err = get("/metrics"); err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return gauges(resp.Body, heapInuse, heapAlloc, goroutines)
}

// gauges reads the unlabelled samples of names from a Prometheus text
// exposition; each must be there.
func gauges(r io.Reader, names ...string) (map[string]float64, error) {
	out := map[string]float64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 || !slices.Contains(names, f[0]) {
			continue
		}
		v, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			return nil, fmt.Errorf("failed to parse metric line %q: %w", sc.Text(), err)
		}
		out[f[0]] = v
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("failed to read the controller's metrics: %w", err)
	}
	for _, n := range names {
		if _, ok := out[n]; !ok {
			return nil, fmt.Errorf("failed to find %s in the controller's metrics", n)
		}
	}
	return out, nil
}

// flagValue returns the value of --name=value in a /proc cmdline (NUL
// separated arguments), or "".
func flagValue(cmdline []byte, name string) string {
	for _, arg := range strings.Split(string(cmdline), "\x00") {
		if v, ok := strings.CutPrefix(arg, name+"="); ok {
			return v
		}
	}
	return ""
}

// pingPath is what Flux's kubeconfig sanitizer (runtime/client.KubeConfig)
// asks of a cluster, once for each client it builds from a kubeconfig, to
// tell whether the server has flow control: the requests to it count the
// remote clients the controller built.
const pingPath = "/livez/ping"

// countRequests counts the completed requests of user to path in the audit
// log at auditPath.
func countRequests(auditPath, user, path string) (int, error) {
	var n int
	err := harness.ReadAudit(auditPath, path, func(ev harness.Event) {
		if ev.Stage == "ResponseComplete" && ev.User.Username == user && ev.Path() == path {
			n++
		}
	})
	return n, err
}
