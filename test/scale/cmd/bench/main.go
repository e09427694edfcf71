// Command bench measures the add-on, and helm-controller in
// driftDetection.mode warn for comparison, on fleets of HelmReleases
// (test/scale), one fresh control plane per fleet size and controller, and
// prints one table of the results and the ratios between the two, and
// writes them as JSON. `make bench` runs it; BENCH_N (space-separated
// sizes), BENCH_CONTROLLERS and the other BENCH_* variables of
// scale.Config tune it.
//
// It exits non-zero when the harness fails, when the add-on wrote anything
// or made a discovery request in a steady-state window (or, under the
// lockdown, more than one request a pass besides access reviews), or when
// helm-controller upgraded a release in one; it asserts no timing.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/templatedrift/template-drift-controller/internal/testenv"
	"github.com/templatedrift/template-drift-controller/test/harness"
	"github.com/templatedrift/template-drift-controller/test/scale"
)

func main() { harness.Main("bench", run) }

func run(ctx context.Context) error {
	cfg, err := scale.ConfigFromEnv(os.Getenv)
	if err != nil {
		return err
	}
	root, err := testenv.RepoRoot()
	if err != nil {
		return err
	}
	paths, err := testenv.DefaultPaths()
	if err != nil {
		return err
	}
	started := time.Now()
	stamp := started.UTC().Format("20060102T150405Z")
	artifacts := filepath.Join(root, "_artifacts", "bench", stamp)
	if cfg.Out == "" {
		cfg.Out = filepath.Join(root, "_artifacts", "bench", stamp+".json")
	}
	report := scale.Report{Started: started, Commit: describe(root), Cores: runtime.NumCPU(), GoVersion: runtime.Version(),
		KubeVersion: paths.KubeVersion, EtcdVersion: paths.EtcdVersion}
	targets, err := targets(ctx, cfg, root, &report)
	if err != nil {
		return err
	}
runs:
	for _, fleet := range cfg.Fleets {
		for _, n := range cfg.Sizes {
			for _, t := range targets {
				res, err := scale.Run(ctx, cfg, t, fleet, n, filepath.Join(artifacts, fmt.Sprintf("n%d-%s-%s", n, fleet.Name, t.Name)), logf)
				if err != nil {
					report.Failure = err.Error()
					break runs
				}
				report.Runs = append(report.Runs, res)
			}
		}
	}
	report.Comparisons = scale.Compare(report.Runs)
	return finish(report, cfg.Out, artifacts)
}

// targets resolves the controllers of cfg, in their order, building the
// add-on once unless BENCH_CONTROLLER_BIN names a build, and records their
// binaries and flags in report.
func targets(ctx context.Context, cfg scale.Config, root string, report *scale.Report) ([]scale.Target, error) {
	var out []scale.Target
	bin := cfg.ControllerBin
	for _, name := range cfg.Controllers {
		if name == scale.HelmController {
			t, err := scale.HelmControllerTarget(cfg, root)
			if err != nil {
				return nil, err
			}
			report.HelmControllerBin, report.HelmControllerArgs = t.Bin, t.Flags
			out = append(out, t)
			continue
		}
		if bin == "" {
			logf("Building the controller")
			var err error
			if bin, err = scale.BuildController(ctx, root); err != nil {
				return nil, err
			}
		}
		t := scale.AddonTarget(cfg, bin)
		if name == scale.Lockdown {
			t = scale.LockdownTarget(cfg, bin)
		}
		// The lockdown's flags are these and --default-service-account.
		report.ControllerBin, report.ControllerArgs = bin, scale.AddonTarget(cfg, bin).Flags
		out = append(out, t)
	}
	return out, nil
}

// finish prints the tables, writes the JSON report, and turns a failure,
// a write of the add-on or an upgrade of helm-controller in a steady state
// into the error the command exits with.
func finish(report scale.Report, out, artifacts string) error {
	fmt.Println()
	if err := scale.WriteTable(os.Stdout, report.Runs); err != nil {
		return err
	}
	scale.WriteBreakdowns(os.Stdout, report.Runs)
	if len(report.Comparisons) > 0 {
		fmt.Println()
		if err := scale.WriteComparisons(os.Stdout, report.Comparisons); err != nil {
			return err
		}
	}
	if err := report.WriteJSON(out); err != nil {
		return fmt.Errorf("failed to write the report: %w", err)
	}
	fmt.Printf("\nreport: %s\nlogs:   %s\n", out, artifacts)
	var errs []error
	if report.Failure != "" {
		errs = append(errs, errors.New(report.Failure))
	}
	for _, r := range report.Runs {
		if r.Controller == scale.HelmController {
			// helm-controller patches its status and records events on
			// every pass: only an upgrade is a failure of the harness.
			if r.Upgrades > 0 {
				errs = append(errs, fmt.Errorf("with %d releases, helm-controller upgraded %d times in the steady state; want 0", r.N, r.Upgrades))
			}
			continue
		}
		if r.Writes > 0 {
			errs = append(errs, fmt.Errorf("with %d releases (fleet %s), the controller wrote %d times in the steady state (%v); want 0", r.N, r.Fleet, r.Writes, r.Requests.WritesByResource()))
		}
		if n := r.Requests.Total; r.Controller == scale.Lockdown && float64(n) > r.Reconciles+inFlight {
			// A pass under the lockdown lists its release's Secrets as
			// the tenant, and reads the rest from the informers; its
			// account's rules, reviewed at its first pass, are kept while
			// no RBAC object changes. A request counts when it is made and
			// a pass when it ends: the passes running at the window's end
			// made theirs inside it.
			errs = append(errs, fmt.Errorf("with %d releases (fleet %s), the controller under the lockdown made %d requests in the steady state, over %.0f passes; want at most one a pass (%v)",
				r.N, r.Fleet, n, r.Reconciles, r.Requests.ByResource))
		}
		if d := r.Requests.Discovery(); d > 0 {
			errs = append(errs, fmt.Errorf("with %d releases (fleet %s), the controller made %d discovery requests in the steady state; want 0", r.N, r.Fleet, d))
		}
	}
	return errors.Join(errs...)
}

// inFlight is how many passes may be running at a window's end: the
// controller's default --concurrent, which the smoke runs with.
const inFlight = 4

// describe names the code measured: `git describe --always --dirty`.
func describe(root string) string {
	cmd := exec.Command("git", "describe", "--always", "--dirty")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}
