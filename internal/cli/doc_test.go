package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	flag "github.com/spf13/pflag"

	"github.com/templatedrift/template-drift-controller/internal/testenv"
	"github.com/templatedrift/template-drift-controller/internal/testenv/doctable"
)

// TestReferenceDocumentsFlags compares the flags tables of
// docs/reference.md with the commands' flags, as the controller's flags
// table is checked (cmd/template-drift-controller): diff's and preview's
// own, with their defaults, in their sections, and kubectl's kubeconfig
// flags and the client's rate, which both commands share, in the diff
// command's section. The flags come from the commands, not from a copy:
// genericclioptions can add one on a dependency update.
func TestReferenceDocumentsFlags(t *testing.T) {
	root, err := testenv.RepoRoot()
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	page := filepath.Join("docs", "reference.md")
	doc, err := os.ReadFile(filepath.Join(root, page))
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	cmd := newRoot(Name, newClusterFlags(), new(int))
	local := func(name string) *flag.FlagSet {
		c, _, err := cmd.Find([]string{name})
		NewWithT(t).Expect(err).NotTo(HaveOccurred())
		return c.LocalNonPersistentFlags()
	}
	cases := []struct {
		section, header string
		defaults        string // the defaults' column, "" for none
		flags           *flag.FlagSet
	}{
		{section: "The diff command", header: "flag", defaults: "default", flags: local("diff")},
		{section: "The preview command", header: "flag", defaults: "default", flags: local("preview")},
		{section: "The diff command", header: "kubeconfig flag", flags: cmd.PersistentFlags()},
	}
	for _, c := range cases {
		t.Run(c.section+" "+c.header, func(t *testing.T) {
			g := NewWithT(t)
			usage := doctable.ParseUsage(c.flags.FlagUsages())
			g.Expect(usage).NotTo(BeEmpty())
			mismatches, err := doctable.CheckFlags(doc, c.section, c.header, c.defaults, usage)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(mismatches).To(BeEmpty(), "the %q table of %s (%q) and the command's flags disagree:\n%s",
				c.header, page, c.section, strings.Join(mismatches, "\n"))
		})
	}
}
