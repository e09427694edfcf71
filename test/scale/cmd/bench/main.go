// Command bench measures the add-on, and helm-controller in
// driftDetection.mode warn for comparison, on fleets of HelmReleases
// (test/scale), one fresh control plane per fleet size and controller, and
// prints one table of the results and the ratios between the two, and
// writes them as JSON. `make bench` runs it; BENCH_N (space-separated
// sizes), BENCH_CONTROLLERS and the other BENCH_* variables of
// scale.Config tune it. Each controller is measured by its spec
// (scale.AddonSpec, scale.LockdownSpec, scale.HelmControllerSpec).
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
	artifacts := filepath.Join(root, reportDir, stamp)
	report := scale.Report{Started: started, Commit: describe(root), Cores: runtime.NumCPU(), GoVersion: runtime.Version(),
		KubeVersion: paths.KubeVersion, EtcdVersion: paths.EtcdVersion}
	specs, err := resolveSpecs(ctx, cfg, root, &report)
	if err != nil {
		return err
	}
runs:
	for _, fleet := range cfg.Fleets {
		for _, n := range cfg.Sizes {
			for _, sp := range specs {
				res, err := sp.measure(ctx, scale.Run{Fleet: fleet, N: n, Window: cfg.Window, KeepAudit: cfg.KeepAudit, Logf: logf,
					Dir: filepath.Join(artifacts, fmt.Sprintf("n%d-%s-%s", n, fleet.Name, sp.controller))})
				if err != nil {
					report.Failure = err.Error()
					break runs
				}
				report.Runs = append(report.Runs, res)
			}
		}
	}
	report.Comparisons = scale.Compare(report.Runs)
	return finish(report, filepath.Join(root, reportDir, stamp+".json"), artifacts)
}

// reportDir is where the JSON report and, beside it under the same
// timestamp, the runs' folders go: CI keeps _artifacts/ of every step.
const reportDir = "_artifacts/bench"

// spec is one controller of BENCH_CONTROLLERS and the spec that measures
// it on a run.
type spec struct {
	controller string
	measure    func(context.Context, scale.Run) (scale.Result, error)
}

// resolveSpecs resolves the controllers of cfg, in their order, to their
// specs, building the add-on once unless BENCH_CONTROLLER_BIN names a
// build, and records their binaries and flags in report.
func resolveSpecs(ctx context.Context, cfg scale.Config, root string, report *scale.Report) ([]spec, error) {
	var out []spec
	addon := scale.Addon{Bin: cfg.ControllerBin, Flags: scale.ControllerFlags(cfg), Env: cfg.ControllerEnv, Shards: cfg.Shards, CPUProfile: cfg.CPUProfile}
	for _, name := range cfg.Controllers {
		if name == scale.HelmController {
			bin, crds, err := scale.LocateHelmController(root)
			if err != nil {
				return nil, err
			}
			report.HelmControllerBin, report.HelmControllerArgs = bin, scale.HelmControllerFlags()
			out = append(out, spec{name, func(ctx context.Context, run scale.Run) (scale.Result, error) {
				return scale.HelmControllerSpec(ctx, scale.HelmControllerSpecInput{Run: run, Bin: bin, SourceCRDs: crds})
			}})
			continue
		}
		if addon.Bin == "" {
			logf("Building the controller")
			var err error
			if addon.Bin, err = scale.BuildController(ctx, root); err != nil {
				return nil, err
			}
		}
		// The lockdown's flags are these and --default-service-account.
		report.ControllerBin, report.ControllerArgs = addon.Bin, addon.Flags
		out = append(out, addonSpec(name, addon, cfg.Floor))
	}
	return out, nil
}

// addonSpec is the spec of the add-on's controller name: its own run,
// with the write floor when floor is set, or under the lockdown.
func addonSpec(name string, addon scale.Addon, floor bool) spec {
	if name == scale.Lockdown {
		return spec{name, func(ctx context.Context, run scale.Run) (scale.Result, error) {
			return scale.LockdownSpec(ctx, scale.LockdownSpecInput{Run: run, Addon: addon})
		}}
	}
	return spec{name, func(ctx context.Context, run scale.Run) (scale.Result, error) {
		return scale.AddonSpec(ctx, scale.AddonSpecInput{Run: run, Addon: addon, Floor: floor})
	}}
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
		errs = append(errs, steadyStateChecks[r.Controller](r)...)
	}
	return errors.Join(errs...)
}

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
