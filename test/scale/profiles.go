package scale

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

// saveProfile reads path of the controller's pprof handlers (served on
// its metrics endpoint, as Flux controllers serve them) at addr into
// file, waiting up to timeout for the answer.
func saveProfile(ctx context.Context, addr, path, file string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+path, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("failed to read the controller's %s: %w", path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("failed to read the controller's %s: HTTP %d", path, resp.StatusCode)
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		_ = f.Close()
		return fmt.Errorf("failed to save the controller's %s: %w", path, err)
	}
	return f.Close()
}

// profileConvergence reads a CPU profile of the add-on's first d
// (BENCH_CPU_PROFILE) from its start, into the run's cpu-converge.pb.gz,
// in the background; the session waits for it when the spec ends, before
// the processes stop. Without d it reads none.
func profileConvergence(s *session, p *processes, d time.Duration) {
	if d <= 0 {
		return
	}
	done := make(chan struct{})
	s.deferCleanup(func(bool) { <-done })
	go func() {
		defer close(done)
		path := fmt.Sprintf("/debug/pprof/profile?seconds=%d", int(d.Seconds()))
		file := filepath.Join(s.run.Dir, "cpu-converge.pb.gz")
		if err := saveProfile(context.Background(), p.metricsAddr(), path, file, d+time.Minute); err != nil {
			s.logf("%v", err)
		}
	}()
}

// saveSteadyHeap saves the add-on's heap profile after a collection at
// the end of the steady-state window, into dir/heap-steady.pb.gz: what
// its memory holds for the fleet.
func saveSteadyHeap(ctx context.Context, dir string, p *processes) error {
	return saveProfile(ctx, p.metricsAddr(), "/debug/pprof/heap?gc=1", filepath.Join(dir, "heap-steady.pb.gz"), time.Minute)
}
