// Command promcheck runs promtool over the monitoring configuration the
// project ships (make monitoring-test): `promtool check rules` on the
// PrometheusRule's rule groups and on the Grafana dashboard's queries (each
// as a recording rule, so promtool parses it), then `promtool test rules`
// on the alerts' unit tests. promtool reads plain rule files, so the rule
// groups are taken out of the PrometheusRule object into a temporary
// directory first.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/templatedrift/template-drift-controller/internal/monitoring"
)

// Files written into the work directory; testsFile's rule_files names
// rulesFile.
const (
	rulesFile     = "prometheusrule.rules.yaml"
	dashboardFile = "dashboard.rules.yaml"
	testsFile     = "prometheusrule_test.yaml"
)

func main() {
	promtool := flag.String("promtool", "", "path of the promtool binary (hack/build-tools.sh promtool builds it)")
	root := flag.String("root", ".", "the repository root")
	tests := flag.String("tests", "internal/monitoring/testdata/"+testsFile, "promtool's unit tests of the alerts, relative to -root")
	flag.Parse()
	if err := run(*promtool, *root, *tests); err != nil {
		fmt.Fprintln(os.Stderr, "promcheck:", err)
		os.Exit(1)
	}
}

func run(promtool, root, tests string) error {
	if promtool == "" {
		return fmt.Errorf("-promtool is required")
	}
	groups, queries, err := monitoring.Shipped(root)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "promcheck")
	if err != nil {
		return fmt.Errorf("failed to create a work directory: %w", err)
	}
	defer os.RemoveAll(dir)

	var dashboard []monitoring.Rule
	for _, q := range queries {
		if strings.HasPrefix(q.Source, "alert ") {
			continue
		}
		dashboard = append(dashboard, monitoring.Rule{Record: fmt.Sprintf("dashboard_query_%d", len(dashboard)+1), Expr: q.Expr})
	}
	if err := writeRules(filepath.Join(dir, rulesFile), groups); err != nil {
		return err
	}
	if err := writeRules(filepath.Join(dir, dashboardFile), []monitoring.RuleGroup{{Name: "dashboard", Rules: dashboard}}); err != nil {
		return err
	}
	data, err := os.ReadFile(filepath.Join(root, tests))
	if err != nil {
		return fmt.Errorf("failed to read the unit tests: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, testsFile), data, 0o644); err != nil {
		return fmt.Errorf("failed to write the unit tests: %w", err)
	}

	abs, err := filepath.Abs(promtool)
	if err != nil {
		return fmt.Errorf("failed to resolve %s: %w", promtool, err)
	}
	fmt.Printf("promcheck: %d alerting rules from %s, %d dashboard queries from %s\n",
		len(queries)-len(dashboard), monitoring.RulesFile, len(dashboard), monitoring.DashboardFile)
	for _, args := range [][]string{
		{"check", "rules", rulesFile, dashboardFile},
		{"test", "rules", testsFile},
	} {
		cmd := exec.Command(abs, args...)
		cmd.Dir, cmd.Stdout, cmd.Stderr = dir, os.Stdout, os.Stderr
		fmt.Println("+ promtool", strings.Join(args, " "))
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("promtool %s failed: %w", strings.Join(args, " "), err)
		}
	}
	return nil
}

// writeRules writes groups as a Prometheus rules file.
func writeRules(path string, groups []monitoring.RuleGroup) error {
	data, err := yaml.Marshal(map[string]any{"groups": groups})
	if err != nil {
		return fmt.Errorf("failed to encode %s: %w", filepath.Base(path), err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("failed to write %s: %w", filepath.Base(path), err)
	}
	return nil
}
