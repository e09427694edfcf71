package doctable

import (
	"testing"

	. "github.com/onsi/gomega"
)

// usage is pflag's usage of a few flags, as FlagUsages prints it.
const usage = `  -A, --all-namespaces           Diff the HelmReleases of every namespace.
      --kinds strings            The kinds. (default [a/B,c/D])
  -o, --output string            Output format. (default "text")
      --sa string                The account.
      --timeout duration         How long it may take. (default 1m0s)
      --long string              A usage that goes on
                                 over two lines. (default "x")

      --after-blank int          After a blank line. (default 3)
`

const flagsPage = `# Flags

## The command

| flag | default | meaning |
|---|---|---|
| ` + "`-A`/`--all-namespaces`" + ` | ` + "`false`" + ` | every namespace |
| ` + "`--kinds`" + ` | see [Kinds](#kinds) | the kinds |
| ` + "`-o`/`--output`, `--sa`" + ` | ` + "`text`, `\"\"`" + ` | one each |
| ` + "`--timeout`" + ` | ` + "`2m0s`" + ` | a wrong default |
| ` + "`--long`, `--after-blank`" + ` | ` + "`x`" + ` | one for both, wrong for one |
| ` + "`--gone`" + ` | ` + "`1`" + ` | not registered |

## Kinds

The kinds are ` + "`a/B`, `c/D`" + `.
`

func TestParseUsage(t *testing.T) {
	g := NewWithT(t)
	g.Expect(ParseUsage(usage)).To(Equal(map[string]UsageFlag{
		"all-namespaces": {},
		"kinds":          {Type: "strings", Default: "[a/B,c/D]", Shown: true},
		"output":         {Type: "string", Default: `"text"`, Shown: true},
		"sa":             {Type: "string"},
		"timeout":        {Type: "duration", Default: "1m0s", Shown: true},
		"long":           {Type: "string", Default: `"x"`, Shown: true},
		"after-blank":    {Type: "int", Default: "3", Shown: true},
	}))
}

func TestCheckFlags(t *testing.T) {
	g := NewWithT(t)
	flags := ParseUsage(usage + "      --undocumented   Not in the table.\n")
	got, err := CheckFlags([]byte(flagsPage), "The command", "flag", "default", flags)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(Equal([]string{
		"registered but missing from the table: --undocumented",
		"in the table but not registered: --gone",
		"--timeout: the table writes `2m0s`, the default is `1m0s`",
		"--after-blank: the table writes `x`, the default is `3`",
	}))

	got, err = CheckFlags([]byte(flagsPage), "The command", "flag", "", ParseUsage(usage+"      --gone int   (default 1)\n"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(BeEmpty(), "names only")

	_, err = CheckFlags([]byte(flagsPage), "Missing", "flag", "default", flags)
	g.Expect(err).To(MatchError(ContainSubstring("no section")))
}
