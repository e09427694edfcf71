package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/templatedrift/template-drift-controller/internal/testenv"
	"github.com/templatedrift/template-drift-controller/internal/testenv/doctable"
)

// flagsDoc is the page whose "Controller flags" table documents every flag
// of the controller binary.
var flagsDoc = []string{"docs", "reference.md"}

// flagsSection is the heading of that table's section, flagsHeader the
// first cell of its header row, and defaultHeader its defaults' column.
const (
	flagsSection  = "Controller flags"
	flagsHeader   = "flag"
	defaultHeader = "default"
)

// TestFlagsDocMatchesHelp builds the controller binary, runs it with --help,
// and compares the flags it lists with the flags table of docs/reference.md:
// the table must name every flag the binary registers, and nothing else. The
// flags come from the real binary rather than from a copy of the list, because
// most are bound by fluxcd/pkg/runtime and controller-runtime option sets that
// can add flags on a dependency update. Each flag's default in the table must
// be the one the binary registers (doctable.CheckDefaults). It also checks the exit
// codes the page states: 0 for --help, 2 for an unknown flag.
func TestFlagsDocMatchesHelp(t *testing.T) {
	g := NewWithT(t)
	bin := buildController(t)

	help, code := runController(t, bin, "--help")
	g.Expect(code).To(Equal(0), "--help must exit 0; output:\n%s", help)
	helpFlags := doctable.ParseUsage(help)
	g.Expect(helpFlags).To(HaveKey("template-kinds"), "--help output was not parsed as expected:\n%s", help)
	g.Expect(helpFlags).To(HaveKey("resync-interval"), "--help output was not parsed as expected:\n%s", help)

	out, code := runController(t, bin, "--no-such-flag")
	g.Expect(code).To(Equal(2), "an unknown flag must exit 2; output:\n%s", out)

	doc, err := os.ReadFile(repoPath(t, flagsDoc...))
	g.Expect(err).NotTo(HaveOccurred())
	mismatches, err := doctable.CheckFlags(doc, flagsSection, flagsHeader, defaultHeader, helpFlags)
	g.Expect(err).NotTo(HaveOccurred())
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

// repoPath returns a path below the repository root.
func repoPath(t *testing.T, elem ...string) string {
	t.Helper()
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(append([]string{root}, elem...)...)
}
