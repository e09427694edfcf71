// Command chaos runs the chaos matrix (test/chaos): each scenario of
// CHAOS_SCENARIOS on a fresh control plane with a fleet of CHAOS_N releases,
// its fault, then the invariants, and prints one row per scenario and every
// violation, and writes them as JSON to _artifacts/chaos/<timestamp>.json.
// `make chaos` runs it; the CHAOS_* variables of chaos.Config tune it.
//
// It exits non-zero when the harness fails or an invariant does not hold; it
// asserts no timing.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/templatedrift/template-drift-controller/internal/testenv"
	"github.com/templatedrift/template-drift-controller/test/chaos"
	"github.com/templatedrift/template-drift-controller/test/harness"
	"github.com/templatedrift/template-drift-controller/test/scale"
)

func main() { harness.Main("chaos", run) }

func run(ctx context.Context) error {
	started := time.Now()
	cfg, err := chaos.ConfigFromEnv(os.Getenv, started)
	if err != nil {
		return err
	}
	root, err := testenv.RepoRoot()
	if err != nil {
		return err
	}
	bin := cfg.ControllerBin
	if bin == "" {
		logf("Building the controller")
		if bin, err = scale.BuildController(ctx, root); err != nil {
			return err
		}
	}
	stamp := started.UTC().Format("20060102T150405Z")
	artifacts := filepath.Join(root, "_artifacts", "chaos", stamp)
	logf("CHAOS_N=%d CHAOS_KILLS=%d CHAOS_RESTARTS=%d CHAOS_REWRITES=%d CHAOS_SEED=%d CHAOS_MANAGERS=%q, artifacts in %s",
		cfg.N, cfg.Kills, cfg.Restarts, cfg.Rewrites, cfg.Seed, strings.Join(cfg.Managers, " "), artifacts)
	var results []chaos.Result
	var failure error
	for _, s := range cfg.Scenarios {
		res, err := chaos.Run(ctx, cfg, s, bin, filepath.Join(artifacts, s), logf)
		if err != nil {
			failure = err
			break
		}
		results = append(results, res)
	}
	fmt.Println()
	chaos.PrintMatrix(os.Stdout, results)
	fmt.Printf("\n%d scenarios in %s\n", len(results), time.Since(started).Round(time.Second))
	if err := writeJSON(artifacts+".json", cfg, results); err != nil {
		return err
	}
	if failure != nil {
		return failure
	}
	for _, r := range results {
		if !r.Held() {
			return errors.New("invariants did not hold; the audit log and the controller's log are in " + artifacts)
		}
	}
	return nil
}

func writeJSON(path string, cfg chaos.Config, results []chaos.Result) error {
	b, err := json.MarshalIndent(struct {
		Config  chaos.Config   `json:"config"`
		Results []chaos.Result `json:"results"`
	}{cfg, results}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, time.Now().Format("15:04:05")+" "+format+"\n", args...)
}
