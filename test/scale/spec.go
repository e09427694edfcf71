package scale

import (
	"context"
	"fmt"
	"os"
	"time"
)

// Run is what every spec of one fleet takes: the fleet, its size, the
// steady-state window and where the run's files and progress go. Each
// spec's input adds what only that measurement uses.
type Run struct {
	// Fleet is the shape of the management cluster, N its releases.
	Fleet Fleet
	N     int
	// Window is the steady-state window (Config.Window).
	Window time.Duration
	// Dir is the run's folder: the controller's log, its profiles, and the
	// audit log of a failed run, or of every run with KeepAudit.
	Dir       string
	KeepAudit bool
	// Logf prints the harness's progress.
	Logf func(format string, args ...any)
}

// session is one spec's bookkeeping, as a ginkgo spec's By and
// DeferCleanup: each step is logged as it starts and named in its error,
// and what the steps started is stopped, in reverse order, when the spec
// ends.
type session struct {
	run        Run
	controller string
	step       string
	cleanups   []func(ok bool)
}

// begin opens the session of the spec measuring controller on run, and
// the result with the figures the run's shape gives.
func begin(run Run, controller string) (*session, Result, error) {
	if err := os.MkdirAll(run.Dir, 0o755); err != nil {
		return nil, Result{}, err
	}
	return &session{run: run, controller: controller}, Result{Controller: controller, N: run.N, Fleet: run.Fleet.Name,
		TemplatesPerRelease: run.Fleet.Templates, DriftedPerRelease: run.Fleet.Drifted,
		WindowSeconds: run.Window.Seconds(), ResyncSeconds: resync.Seconds()}, nil
}

// by logs the step that starts.
func (s *session) by(step string) {
	s.step = step
	s.run.Logf("N=%d %s %s: %s", s.run.N, s.run.Fleet.Name, s.controller, step)
}

// failed names the current step, the size, the controller and the fleet
// in err.
func (s *session) failed(err error) error {
	return fmt.Errorf("failed to %s with %d releases (%s, fleet %s): %w", s.step, s.run.N, s.controller, s.run.Fleet.Name, err)
}

// logf logs a line of the run that is not a step.
func (s *session) logf(format string, args ...any) {
	s.run.Logf("N=%d: "+format, append([]any{s.run.N}, args...)...)
}

// deferCleanup runs f when the spec ends; ok says whether it succeeded.
func (s *session) deferCleanup(f func(ok bool)) { s.cleanups = append(s.cleanups, f) }

// end runs the clean-ups, the last registered first.
func (s *session) end(ok bool) {
	for i := len(s.cleanups) - 1; i >= 0; i-- {
		s.cleanups[i](ok)
	}
}

// startMeasuring runs the steps every spec takes once its fleet is in
// place: it samples the idle API server into res, starts the harness's
// watch of the HelmReleases, then the controller c.
func startMeasuring(ctx context.Context, s *session, res *Result, cp *controlPlane, c controller) (*hrWatch, *processes, error) {
	var err error
	s.by("sample the idle API server")
	if res.APIServerIdleCPUMsPerSecond, err = sampleIdle(ctx, cp); err != nil {
		return nil, nil, s.failed(err)
	}
	s.by("watch the HelmReleases")
	hrs, err := watchHelmReleases(ctx, s, cp)
	if err != nil {
		return nil, nil, s.failed(err)
	}
	s.by("start the controller")
	p, err := startController(s, cp, c)
	if err != nil {
		return nil, nil, s.failed(err)
	}
	return hrs, p, nil
}
