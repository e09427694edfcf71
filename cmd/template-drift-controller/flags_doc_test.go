package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
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

var (
	// helpFlagLine matches a flag line of pflag's usage: "  -n, --name type   usage"
	// or "      --name type   usage".
	helpFlagLine = regexp.MustCompile(`^\s+(?:-[A-Za-z0-9], )?--([a-z0-9][a-z0-9-]*)\b`)
	// helpFlagType matches the start of such a line with the type of the
	// flag's value, which pflag leaves out for a bool flag.
	helpFlagType = regexp.MustCompile(`^\s+(?:-[A-Za-z0-9], )?--([a-z0-9][a-z0-9-]*)(?: ([A-Za-z0-9]+))?(?:\s{2,}|$)`)
	// helpDefault matches the default pflag appends to a flag's usage when
	// it is not the zero value of the flag's type.
	helpDefault = regexp.MustCompile(` \(default (.*)\)$`)
	// docFlag matches a flag written in a table cell: `--name`.
	docFlag = regexp.MustCompile(`--[a-z0-9][a-z0-9-]*`)
	// docLink matches a link to a section of the same page: [text](#anchor).
	docLink = regexp.MustCompile(`\]\(#([a-z0-9_-]+)\)`)
)

// zeroDefaults are how the flags table writes the zero value of each type
// of flag, which pflag's usage does not show.
var zeroDefaults = map[string]string{
	"":              "false", // a bool
	"string":        `""`,
	"mapStringBool": `""`,
	"int":           "0",
	"duration":      "0s",
}

// TestFlagsDocMatchesHelp builds the controller binary, runs it with --help,
// and compares the flags it lists with the flags table of docs/reference.md:
// the table must name every flag the binary registers, and nothing else. The
// flags come from the real binary rather than from a copy of the list, because
// most are bound by fluxcd/pkg/runtime and controller-runtime option sets that
// can add flags on a dependency update. Each flag's default in the table must
// be the one the binary registers (see docDefaults). It also checks the exit
// codes the page states: 0 for --help, 2 for an unknown flag.
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

	wrong, err := checkDocDefaults(docPath, parseHelpDefaults(help))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(wrong).To(BeEmpty(), "the defaults of the flags table of %s (%q) and `template-drift-controller --help` disagree:\n%s",
		filepath.Join(flagsDoc...), flagsSection, strings.Join(wrong, "\n"))
}

// helpFlag is a flag as pflag's usage shows it.
type helpFlag struct {
	// typ is the type of its value as the usage names it, "" for a bool.
	typ string
	// def is its default as the usage shows it (a string's quoted), and
	// shown false when the usage shows none: the type's zero value.
	def   string
	shown bool
}

// parseHelpDefaults returns the flags of pflag's usage output with their
// type and default, by long name. A flag's usage ends at the next flag's
// line or a blank line.
func parseHelpDefaults(help string) map[string]helpFlag {
	out := map[string]helpFlag{}
	name, usage := "", ""
	done := func() {
		if name == "" {
			return
		}
		f := out[name]
		if m := helpDefault.FindStringSubmatch(strings.TrimSpace(usage)); m != nil {
			f.def, f.shown = m[1], true
		}
		out[name] = f
	}
	for _, line := range strings.Split(help, "\n") {
		switch m := helpFlagType.FindStringSubmatch(line); {
		case m != nil:
			done()
			name, usage = m[1], line[len(m[0]):]
			out[name] = helpFlag{typ: m[2]}
		case strings.TrimSpace(line) == "":
			done()
			name = ""
		default:
			usage += " " + strings.TrimSpace(line)
		}
	}
	done()
	return out
}

// docDefaults is how the flags table writes f's default, as the code spans
// of the cell: the string itself (`""` when empty), each element of a list,
// any other value as pflag prints it, and a zero value as zeroDefaults says.
func docDefaults(f helpFlag) ([]string, error) {
	if !f.shown {
		zero, ok := zeroDefaults[f.typ]
		if !ok {
			return nil, fmt.Errorf("no rule for the zero default of a %q flag: add one to zeroDefaults", f.typ)
		}
		return []string{zero}, nil
	}
	switch f.typ {
	case "string":
		v, err := strconv.Unquote(f.def)
		if err != nil {
			return nil, fmt.Errorf("the default %s of a string flag is not quoted: %w", f.def, err)
		}
		if v == "" {
			v = `""`
		}
		return []string{v}, nil
	case "strings":
		return strings.Split(strings.TrimSuffix(strings.TrimPrefix(f.def, "["), "]"), ","), nil
	}
	return []string{f.def}, nil
}

// checkDocDefaults compares the default column of the flags table of the page
// at path with the defaults of help, row by row, and names every difference.
// A row of several flags writes one value for all of them, or one each in
// the flags' order; a row of one list flag writes its elements, or links to
// the section of the page that writes them, as "`a`, `b`, `c`".
func checkDocDefaults(path string, help map[string]helpFlag) ([]string, error) {
	doc, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	rows, err := doctable.Rows(doc, flagsSection, flagsHeader)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, row := range rows {
		names := docFlag.FindAllString(row[flagsHeader], -1)
		cell := row[defaultHeader]
		written := doctable.Code(cell)
		var want [][]string
		for _, n := range names {
			f, ok := help[strings.TrimPrefix(n, "--")]
			if !ok {
				want = append(want, nil) // not registered: the names' check says so
				continue
			}
			d, err := docDefaults(f)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", n, err)
			}
			want = append(want, d)
		}
		switch {
		case len(names) == 1 && len(written) == 0 && docLink.MatchString(cell):
			anchor := docLink.FindStringSubmatch(cell)[1]
			if msg := linkedList(doc, anchor, want[0]); msg != "" {
				out = append(out, names[0]+": "+msg)
			}
		case len(names) == 1:
			if want[0] != nil && !slices.Equal(written, want[0]) {
				out = append(out, fmt.Sprintf("%s: the table writes %s, the binary's default is %s", names[0], spans(written), spans(want[0])))
			}
		case len(written) != 1 && len(written) != len(names):
			out = append(out, fmt.Sprintf("%s: %d values for %d flags: write one for all, or one each", strings.Join(names, ", "), len(written), len(names)))
		default:
			for i, n := range names {
				w := written[0]
				if len(written) == len(names) {
					w = written[i]
				}
				if want[i] != nil && !slices.Equal([]string{w}, want[i]) {
					out = append(out, fmt.Sprintf("%s: the table writes %s, the binary's default is %s", n, spans([]string{w}), spans(want[i])))
				}
			}
		}
	}
	return out, nil
}

// linkedList checks that the section of doc at anchor writes the list want
// whole, as "`a`, `b`, `c`", and returns what is wrong, or "".
func linkedList(doc []byte, anchor string, want []string) string {
	section, err := doctable.Section(doc, anchor)
	if err != nil {
		return err.Error()
	}
	list := spans(want)
	i := strings.Index(section, list)
	switch {
	case i < 0:
		return fmt.Sprintf("the table points to #%s, which does not write the binary's default %s", anchor, list)
	case strings.HasSuffix(section[:i], "`, "), strings.HasPrefix(section[i+len(list):], ", `"):
		return fmt.Sprintf("the table points to #%s, which writes more than the binary's default %s", anchor, list)
	}
	return ""
}

// spans writes values as the table does: "`a`, `b`".
func spans(values []string) string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = "`" + v + "`"
	}
	return strings.Join(out, ", ")
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
