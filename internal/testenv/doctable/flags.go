package doctable

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

var (
	// usageFlag matches the start of a flag's line in pflag's usage,
	// "  -n, --name type   usage" or "      --name type   usage", with the
	// type of the flag's value, which pflag leaves out for a bool flag.
	usageFlag = regexp.MustCompile(`^\s+(?:-[A-Za-z0-9], )?--([a-z0-9][a-z0-9-]*)(?: ([A-Za-z0-9]+))?(?:\s{2,}|$)`)
	// usageDefault matches the default pflag appends to a flag's usage when
	// it is not the zero value of the flag's type.
	usageDefault = regexp.MustCompile(` \(default (.*)\)$`)
	// docFlag matches a flag written in a table cell: `--name`.
	docFlag = regexp.MustCompile(`--[a-z0-9][a-z0-9-]*`)
	// docLink matches a link to a section of the same page: [text](#anchor).
	docLink = regexp.MustCompile(`\]\(#([a-z0-9_-]+)\)`)
)

// zeroDefaults are how a flags table writes the zero value of each type of
// flag, which pflag's usage does not show.
var zeroDefaults = map[string]string{
	"":              "false", // a bool
	"string":        `""`,
	"stringArray":   `""`,
	"mapStringBool": `""`,
	"int":           "0",
	"duration":      "0s",
}

// UsageFlag is a flag as pflag's usage shows it.
type UsageFlag struct {
	// Type is the type of its value as the usage names it, "" for a bool.
	Type string
	// Default is its default as the usage shows it (a string's quoted), and
	// Shown false when the usage shows none: the type's zero value.
	Default string
	Shown   bool
}

// ParseUsage returns the flags of pflag's usage output (a binary's --help,
// or FlagSet.FlagUsages) with their type and default, by long name. A
// flag's usage ends at the next flag's line or a blank line.
func ParseUsage(usage string) map[string]UsageFlag {
	out := map[string]UsageFlag{}
	name, text := "", ""
	done := func() {
		if name == "" {
			return
		}
		f := out[name]
		if m := usageDefault.FindStringSubmatch(strings.TrimSpace(text)); m != nil {
			f.Default, f.Shown = m[1], true
		}
		out[name] = f
	}
	for _, line := range strings.Split(usage, "\n") {
		switch m := usageFlag.FindStringSubmatch(line); {
		case m != nil:
			done()
			name, text = m[1], line[len(m[0]):]
			out[name] = UsageFlag{Type: m[2]}
		case strings.TrimSpace(line) == "":
			done()
			name = ""
		default:
			text += " " + strings.TrimSpace(line)
		}
	}
	done()
	return out
}

// CheckFlags compares the flags tables of a section of doc (the tables
// whose first column is header, as Rows reads them; a row may name several
// flags) with flags, a command's flags as ParseUsage reads them: the tables
// must name every flag and nothing else, and, unless defaultHeader is "",
// write each flag's default in that column (see CheckDefaults). It returns
// every difference, so that one run names them all.
func CheckFlags(doc []byte, section, header, defaultHeader string, flags map[string]UsageFlag) ([]string, error) {
	documented, err := Column(doc, section, header, docFlag)
	if err != nil {
		return nil, err
	}
	var registered []string
	for name := range flags {
		registered = append(registered, "--"+name)
	}
	slices.Sort(registered)
	var out []string
	if missing := Missing(registered, documented); len(missing) > 0 {
		out = append(out, "registered but missing from the table: "+strings.Join(missing, ", "))
	}
	if unknown := Missing(documented, registered); len(unknown) > 0 {
		out = append(out, "in the table but not registered: "+strings.Join(unknown, ", "))
	}
	if defaultHeader == "" {
		return out, nil
	}
	wrong, err := CheckDefaults(doc, section, header, defaultHeader, flags)
	return append(out, wrong...), err
}

// CheckDefaults compares the column defaultHeader of the flags tables of a
// section of doc with the defaults of flags, row by row, and names every
// difference. A cell writes a default as its code spans: a string itself
// (`""` when empty), each element of a list, any other value as pflag
// prints it, and a zero value as zeroDefaults says. A row of several flags
// writes one value for all of them, or one each in the flags' order; a row
// of one list flag writes its elements, or links to the section of the
// page that writes them, as "`a`, `b`, `c`".
func CheckDefaults(doc []byte, section, header, defaultHeader string, flags map[string]UsageFlag) ([]string, error) {
	rows, err := Rows(doc, section, header)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, row := range rows {
		names := docFlag.FindAllString(row[header], -1)
		cell := row[defaultHeader]
		written := Code(cell)
		var want [][]string
		for _, n := range names {
			f, ok := flags[strings.TrimPrefix(n, "--")]
			if !ok {
				want = append(want, nil) // not registered: CheckFlags says so
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
				out = append(out, fmt.Sprintf("%s: the table writes %s, the default is %s", names[0], spans(written), spans(want[0])))
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
					out = append(out, fmt.Sprintf("%s: the table writes %s, the default is %s", n, spans([]string{w}), spans(want[i])))
				}
			}
		}
	}
	return out, nil
}

// docDefaults is how a flags table writes f's default, as the code spans
// of its cell.
func docDefaults(f UsageFlag) ([]string, error) {
	if !f.Shown {
		zero, ok := zeroDefaults[f.Type]
		if !ok {
			return nil, fmt.Errorf("no rule for the zero default of a %q flag: add one to zeroDefaults", f.Type)
		}
		return []string{zero}, nil
	}
	switch f.Type {
	case "string":
		v, err := strconv.Unquote(f.Default)
		if err != nil {
			return nil, fmt.Errorf("the default %s of a string flag is not quoted: %w", f.Default, err)
		}
		if v == "" {
			v = `""`
		}
		return []string{v}, nil
	case "strings":
		return strings.Split(strings.TrimSuffix(strings.TrimPrefix(f.Default, "["), "]"), ","), nil
	}
	return []string{f.Default}, nil
}

// linkedList checks that the section of doc at anchor writes the list want
// whole, as "`a`, `b`, `c`", and returns what is wrong, or "".
func linkedList(doc []byte, anchor string, want []string) string {
	section, err := Section(doc, anchor)
	if err != nil {
		return err.Error()
	}
	list := spans(want)
	i := strings.Index(section, list)
	switch {
	case i < 0:
		return fmt.Sprintf("the table points to #%s, which does not write the default %s", anchor, list)
	case strings.HasSuffix(section[:i], "`, "), strings.HasPrefix(section[i+len(list):], ", `"):
		return fmt.Sprintf("the table points to #%s, which writes more than the default %s", anchor, list)
	}
	return ""
}

// spans writes values as a table does: "`a`, `b`".
func spans(values []string) string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = "`" + v + "`"
	}
	return strings.Join(out, ", ")
}
