package harness

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Sampler samples a process's resident memory and open sockets in a
// goroutine of its own, until stopped or the process is gone: the peaks
// between two readings of a run.
type Sampler struct {
	done  chan struct{}
	quit  chan struct{}
	peaks Peaks
}

// Peaks are a Sampler's largest figures, and how many samples it took.
type Peaks struct {
	RSS     int64
	Sockets int
	Samples int
}

// StartSampler samples pid every interval.
func StartSampler(pid int, every time.Duration) *Sampler {
	s := &Sampler{done: make(chan struct{}), quit: make(chan struct{})}
	go func() {
		defer close(s.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			m, err := ReadMemory(pid)
			if err != nil {
				return // the process is gone
			}
			s.peaks.RSS = max(s.peaks.RSS, m.RSS)
			s.peaks.Sockets = max(s.peaks.Sockets, Sockets(pid))
			s.peaks.Samples++
			select {
			case <-s.quit:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

// Stop stops the sampler and returns its figures.
func (s *Sampler) Stop() Peaks {
	close(s.quit)
	<-s.done
	return s.peaks
}

// Sockets counts pid's open sockets (0 when they cannot be read): each
// connection a client keeps, idle or not, is one.
func Sockets(pid int) int {
	dir := filepath.Join("/proc", strconv.Itoa(pid), "fd")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range entries {
		if l, err := os.Readlink(filepath.Join(dir, e.Name())); err == nil && strings.HasPrefix(l, "socket:") {
			n++
		}
	}
	return n
}
