// Command bench measures the add-on on fleets of opted-in HelmReleases
// (test/scale), one fresh control plane per fleet size, and prints one
// table of the results and writes them as JSON. `make bench` runs it;
// BENCH_N (space-separated sizes) and the other BENCH_* variables of
// scale.Config tune it.
//
// It exits non-zero when the harness fails, or when the controller wrote
// anything in a steady-state window; it asserts no timing.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/templatedrift/template-drift-controller/internal/testenv"
	"github.com/templatedrift/template-drift-controller/test/scale"
)

func main() {
	// The harness's own client warnings (deprecated API versions of the
	// fixture) are not results.
	ctrllog.SetLogger(logr.Discard())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

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
	bin := cfg.ControllerBin
	if bin == "" {
		logf("Building the controller")
		if bin, err = scale.BuildController(ctx, root); err != nil {
			return err
		}
	}
	report := scale.Report{Started: started, Commit: describe(root), ControllerBin: bin, Cores: runtime.NumCPU(), GoVersion: runtime.Version(),
		KubeVersion: paths.KubeVersion, EtcdVersion: paths.EtcdVersion, ControllerArgs: scale.ControllerFlags(cfg),
		TemplatesPerRelease: scale.TemplatesPerRelease, DriftedPerRelease: scale.DriftedPerRelease}
	for _, n := range cfg.Sizes {
		res, err := scale.Run(ctx, cfg, bin, n, filepath.Join(artifacts, fmt.Sprintf("n%d", n)), logf)
		if err != nil {
			report.Failure = err.Error()
			break
		}
		report.Runs = append(report.Runs, res)
	}
	return finish(report, cfg.Out, artifacts)
}

// finish prints the table, writes the JSON report, and turns a failure
// or a steady-state write into the error the command exits with.
func finish(report scale.Report, out, artifacts string) error {
	fmt.Println()
	if err := scale.WriteTable(os.Stdout, report.Runs); err != nil {
		return err
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
		if r.Writes > 0 {
			errs = append(errs, fmt.Errorf("with %d releases, the controller wrote %d times in the steady state (%v); want 0", r.N, r.Writes, r.Requests.WritesByResource()))
		}
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
