package scale

import (
	"fmt"
	"time"

	"github.com/templatedrift/template-drift-controller/internal/testenv"
	"github.com/templatedrift/template-drift-controller/test/harness"
)

// processes are a spec's controller as it runs: one process, or one a
// shard, each with its metrics address, and when they were started.
type processes struct {
	procs             []*testenv.Process
	metricsAddrs      []string
	metricsController string
	started           time.Time
}

// startController runs c as its user on cp, with its metrics and health
// endpoints on loopback, and waits until it serves; with shards, one
// process a shard, each on its own ports and log. The session stops them
// when the spec ends.
func startController(s *session, cp *controlPlane, c controller) (*processes, error) {
	p := &processes{metricsController: c.metricsController, started: time.Now()}
	s.deferCleanup(func(bool) { p.stop() })
	for k := range max(c.shards, 1) {
		name := c.name
		if c.shards > 1 {
			name += "-" + ShardName(k)
		}
		var addr string
		proc, err := testenv.StartServing(name, c.bin, 2, 1, func(a []string) []string {
			addr = a[0]
			flags := append([]string{"--metrics-addr=" + a[0], "--health-addr=" + a[1]}, c.flags...)
			return append(flags, shardFlags(k, c.shards)...)
		}, append([]string{"KUBECONFIG=" + cp.kubeconfig}, c.env...), s.run.Dir)
		if err != nil {
			return nil, err
		}
		p.procs, p.metricsAddrs = append(p.procs, proc), append(p.metricsAddrs, addr)
	}
	return p, nil
}

// metricsAddr is the first process's metrics address, where the profiles
// and the Go runtime's memory are read.
func (p *processes) metricsAddr() string { return p.metricsAddrs[0] }

// exited returns an error naming the first process that exited.
func (p *processes) exited() error {
	for _, proc := range p.procs {
		if proc.Exited() {
			return fmt.Errorf("the controller exited (see %s)", proc.LogPath)
		}
	}
	return nil
}

// cpu is the CPU time of every process.
func (p *processes) cpu() (time.Duration, error) {
	var sum time.Duration
	for _, proc := range p.procs {
		cpu, err := harness.CPUTime(proc.PID())
		if err != nil {
			return 0, err
		}
		sum += cpu
	}
	return sum, nil
}

// reconciles is the reconciles of every process.
func (p *processes) reconciles() (float64, error) {
	var sum float64
	for _, addr := range p.metricsAddrs {
		n, err := Reconciles(addr, p.metricsController)
		if err != nil {
			return 0, err
		}
		sum += n
	}
	return sum, nil
}

// breakdown is where every process's convergence went, summed.
func (p *processes) breakdown() (Breakdown, error) {
	var sum Breakdown
	for _, addr := range p.metricsAddrs {
		b, err := ReadBreakdown(addr, p.metricsController)
		if err != nil {
			return sum, err
		}
		sum.Reconciles += b.Reconciles
		sum.ReconcileSeconds += b.ReconcileSeconds
		sum.QueueSeconds += b.QueueSeconds
	}
	return sum, nil
}

// memory reads every process's resident memory: the sum, and each one.
func (p *processes) memory() (harness.Memory, []harness.Memory, error) {
	var sum harness.Memory
	each := make([]harness.Memory, 0, len(p.procs))
	for _, proc := range p.procs {
		m, err := harness.ReadMemory(proc.PID())
		if err != nil {
			return sum, nil, err
		}
		sum.RSS += m.RSS
		sum.Peak += m.Peak
		each = append(each, m)
	}
	return sum, each, nil
}

// stop stops every process; it is safe to call again.
func (p *processes) stop() {
	for _, proc := range p.procs {
		proc.Stop()
	}
}
