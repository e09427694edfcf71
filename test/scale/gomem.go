package scale

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"
)

// GoMemory is where the controller's memory goes, as its Go runtime
// reports it (controller-runtime's metrics: the Go collector's
// go_memstats_*), at the steady-state window's end. It splits the RSS:
// the heap's objects and their free space, what the runtime holds but
// has not returned to the OS, the goroutines' stacks, and the runtime's
// own structures.
type GoMemory struct {
	// HeapInuse is the heap's spans in use (objects and their slack).
	HeapInuse int64 `json:"heapInuseBytes"`
	// HeapRetained is the heap's free spans not returned to the OS
	// (idle minus released): resident, and reused before the heap grows.
	HeapRetained int64 `json:"heapRetainedBytes"`
	// NextGC is the heap size at which the next collection starts.
	NextGC int64 `json:"nextGCBytes"`
	// Stacks is the goroutines' stacks in use.
	Stacks int64 `json:"stackInuseBytes"`
	// Sys is all the runtime took from the OS, released memory included.
	Sys int64 `json:"sysBytes"`
}

// goMemoryMetrics are the Go collector's gauges GoMemory reads, by field.
var goMemoryMetrics = []string{
	"go_memstats_heap_inuse_bytes", "go_memstats_heap_idle_bytes", "go_memstats_heap_released_bytes",
	"go_memstats_next_gc_bytes", "go_memstats_stack_inuse_bytes", "go_memstats_sys_bytes",
}

// ReadGoMemory scrapes the controller's metrics endpoint at addr
// (host:port) for GoMemory.
func ReadGoMemory(addr string) (GoMemory, error) {
	text, err := scrapeMetrics(addr)
	if err != nil {
		return GoMemory{}, err
	}
	return parseGoMemory(text)
}

func parseGoMemory(text string) (GoMemory, error) {
	v := map[string]int64{}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if !ok || strings.HasPrefix(name, "#") {
			continue
		}
		for _, m := range goMemoryMetrics {
			if name == m {
				f, err := strconv.ParseFloat(strings.Fields(value)[0], 64)
				if err != nil {
					return GoMemory{}, fmt.Errorf("failed to parse metric %s: %w", name, err)
				}
				v[name] = int64(f)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return GoMemory{}, err
	}
	for _, m := range goMemoryMetrics {
		if _, ok := v[m]; !ok {
			return GoMemory{}, fmt.Errorf("failed to find %s in the controller's metrics", m)
		}
	}
	return GoMemory{
		HeapInuse: v["go_memstats_heap_inuse_bytes"], NextGC: v["go_memstats_next_gc_bytes"],
		HeapRetained: v["go_memstats_heap_idle_bytes"] - v["go_memstats_heap_released_bytes"],
		Stacks:       v["go_memstats_stack_inuse_bytes"], Sys: v["go_memstats_sys_bytes"],
	}, nil
}

// String is the breakdown as the summary prints it.
func (m GoMemory) String() string {
	return fmt.Sprintf("heap in use %s, heap retained %s, stacks %s, next GC at %s, from the OS %s",
		mebibytes(m.HeapInuse), mebibytes(m.HeapRetained), mebibytes(m.Stacks), mebibytes(m.NextGC), mebibytes(m.Sys))
}
