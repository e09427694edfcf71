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

// profileConvergence reads a CPU profile of the add-on's first
// cfg.CPUProfile (BENCH_CPU_PROFILE) from its start, into
// dir/cpu-converge.pb.gz, in the background; done is closed when it ends.
func (r *run) profileConvergence(ctx context.Context) (done chan struct{}) {
	done = make(chan struct{})
	if r.cfg.CPUProfile <= 0 || r.target.IsHelmController() {
		close(done)
		return done
	}
	go func() {
		defer close(done)
		path := fmt.Sprintf("/debug/pprof/profile?seconds=%d", int(r.cfg.CPUProfile.Seconds()))
		file := filepath.Join(r.dir, "cpu-converge.pb.gz")
		if err := saveProfile(ctx, r.metricsAddr, path, file, r.cfg.CPUProfile+time.Minute); err != nil {
			r.logf("N=%d: %v", r.n, err)
		}
	}()
	return done
}

// saveSteadyHeap saves the add-on's heap profile after a collection at
// the end of the steady-state window, into dir/heap-steady.pb.gz: what
// its memory holds for the fleet.
func (r *run) saveSteadyHeap(ctx context.Context) error {
	if r.target.IsHelmController() {
		return nil
	}
	return saveProfile(ctx, r.metricsAddr, "/debug/pprof/heap?gc=1", filepath.Join(r.dir, "heap-steady.pb.gz"), time.Minute)
}
