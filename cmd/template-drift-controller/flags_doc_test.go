package main

import (
	"bufio"
	"bytes"
	"errors"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/templatedrift/template-drift-controller/internal/doctable"
	"github.com/templatedrift/template-drift-controller/internal/testenv"
)

// flagsDoc is the page whose "Controller flags" table documents every flag
// of the controller binary.
var flagsDoc = []string{"docs", "reference.md"}

// flagsSection is the heading of that table's section, and flagsHeader the
// first cell of its header row.
const (
	flagsSection = "Controller flags"
	flagsHeader  = "flag"
)

var (
	// helpFlagLine matches a flag line of pflag's usage: "  -n, --name type   usage"
	// or "      --name type   usage".
	helpFlagLine = regexp.MustCompile(`^\s+(?:-[A-Za-z0-9], )?--([a-z0-9][a-z0-9-]*)\b`)
	// docFlag matches a flag written in a table cell: `--name`.
	docFlag = regexp.MustCompile(`--[a-z0-9][a-z0-9-]*`)
)

// TestFlagsDocMatchesHelp builds the controller binary, runs it with --help,
// and compares the flags it lists with the flags table of docs/reference.md:
// the table must name every flag the binary registers, and nothing else. The
// flags come from the real binary rather than from a copy of the list, because
// most are bound by fluxcd/pkg/runtime and controller-runtime option sets that
// can add flags on a dependency update. It also checks the exit codes the page
// states: 0 for --help, 2 for an unknown flag.
func TestFlagsDocMatchesHelp(t *testing.T) {
	g := NewWithT(t)
	bin := buildController(t)

	help, code := runController(t, bin, "--help")
	g.Expect(code).To(Equal(0), "--help must exit 0; output:\n%s", help)
	helpFlags := parseHelpFlags(help)
	g.Expect(helpFlags).To(ContainElements("template-kinds", "resync-interval"),
		"--help output was not parsed as expected:\n%s", help)

	out, code := runController(t, bin, "--no-such-flag")
	g.Expect(code).To(Equal(2), "an unknown flag must exit 2; output:\n%s", out)

	docPath := repoPath(t, flagsDoc...)
	docFlags, err := parseDocFlags(docPath)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(docFlags).NotTo(BeEmpty(), "no flags found in the %q table of %s", flagsSection, docPath)

	// Both directions are collected first, so one run names every mismatch.
	var mismatches []string
	if undocumented := doctable.Missing(helpFlags, docFlags); len(undocumented) > 0 {
		mismatches = append(mismatches, "listed by --help but missing from the table: "+dashed(undocumented))
	}
	if unknown := doctable.Missing(docFlags, helpFlags); len(unknown) > 0 {
		mismatches = append(mismatches, "in the table but not registered by the binary: "+dashed(unknown))
	}
	g.Expect(mismatches).To(BeEmpty(), "the flags table of %s (%q) and `template-drift-controller --help` disagree:\n%s",
		filepath.Join(flagsDoc...), flagsSection, strings.Join(mismatches, "\n"))
}

// buildController builds this package's binary into a temporary directory,
// with the environment of the test, so the build reuses the packages that
// `go test` already compiled.
func buildController(t *testing.T) string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to build the controller: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "template-drift-controller")
	cmd := exec.Command(gobin, "build", "-o", bin, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("failed to build the controller: %v\n%s", err, out)
	}
	return bin
}

// runController runs bin with args and returns its combined output and exit
// code. The flags tested make it exit before it reads any kubeconfig.
func runController(t *testing.T, bin string, args ...string) (string, int) {
	t.Helper()
	var out bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return out.String(), 0
	case errors.As(err, &exit):
		return out.String(), exit.ExitCode()
	default:
		t.Fatalf("failed to run %s %v: %v", bin, args, err)
		return "", -1
	}
}

// parseHelpFlags returns the long names of the flags in pflag's usage output.
func parseHelpFlags(help string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(help))
	for sc.Scan() {
		if m := helpFlagLine.FindStringSubmatch(sc.Text()); m != nil {
			out = append(out, m[1])
		}
	}
	return sorted(out)
}

// parseDocFlags returns the flags named in the first column of the flags
// table of the page at path, without their dashes. A row may name several.
func parseDocFlags(path string) ([]string, error) {
	flags, err := doctable.File(path, flagsSection, flagsHeader, docFlag)
	for i, f := range flags {
		flags[i] = strings.TrimPrefix(f, "--")
	}
	return flags, err
}

// repoPath returns a path below the repository root.
func repoPath(t *testing.T, elem ...string) string {
	t.Helper()
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(append([]string{root}, elem...)...)
}

func sorted(names []string) []string {
	slices.Sort(names)
	return slices.Compact(names)
}

func dashed(names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = "--" + n
	}
	return strings.Join(out, ", ")
}
