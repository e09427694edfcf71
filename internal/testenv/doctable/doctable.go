package doctable

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
)

// Row is one row of a table, its cells by the text of its header row's
// cells.
type Row map[string]string

// Rows returns, in the page's order, the rows of the tables in the section
// of doc headed "## <section>" (its subsections included) whose header
// row's first cell is header. Reading only the tables with that header
// keeps the section's other tables (rules, examples, metadata keys) out.
// A cell's `\|` is read as a pipe.
func Rows(doc []byte, section, header string) ([]Row, error) {
	var out []Row
	// inSection: under the section's heading; inTable: in a table's rows;
	// headers: the table's header cells when it is wanted, else nil.
	inSection, found, inTable := false, false, false
	var headers []string
	for _, line := range strings.Split(string(doc), "\n") {
		switch {
		case strings.HasPrefix(line, "## "):
			inSection = strings.TrimSpace(strings.TrimPrefix(line, "## ")) == section
			found = found || inSection
			inTable = false
		case !inSection:
		case !strings.HasPrefix(line, "|"):
			inTable = false
		case !inTable:
			inTable, headers = true, nil
			if c := cells(line); len(c) > 0 && c[0] == header {
				headers = c
			}
		case headers != nil && !isSeparator(line):
			row := Row{}
			for i, c := range cells(line) {
				if i < len(headers) {
					row[headers[i]] = c
				}
			}
			out = append(out, row)
		}
	}
	if !found {
		return nil, fmt.Errorf("no section %q", "## "+section)
	}
	return out, nil
}

// Column returns the names that match name in the first cell of every row
// of the tables Rows reads. A cell may hold several names; each is
// returned once, sorted.
func Column(doc []byte, section, header string, name *regexp.Regexp) ([]string, error) {
	rows, err := Rows(doc, section, header)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range rows {
		out = append(out, name.FindAllString(r[header], -1)...)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// File is Column over the document at path.
func File(path, section, header string, name *regexp.Regexp) ([]string, error) {
	doc, err := read(path)
	if err != nil {
		return nil, err
	}
	out, err := Column(doc, section, header, name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

// FileRows is Rows over the document at path.
func FileRows(path, section, header string) ([]Row, error) {
	doc, err := read(path)
	if err != nil {
		return nil, err
	}
	out, err := Rows(doc, section, header)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

// Missing returns the names of want that are not in have, in want's order.
func Missing(want, have []string) []string {
	var out []string
	for _, w := range want {
		if !slices.Contains(have, w) {
			out = append(out, w)
		}
	}
	return out
}

// code matches a code span: `text`.
var code = regexp.MustCompile("`([^`]*)`")

// Code returns the text of the code spans of cell, in order: the values a
// cell writes as `value`.
func Code(cell string) []string {
	var out []string
	for _, m := range code.FindAllStringSubmatch(cell, -1) {
		out = append(out, m[1])
	}
	return out
}

// Section returns the text under the heading of doc whose anchor is anchor
// (as GitHub derives it from the heading: lower case, punctuation dropped,
// spaces as hyphens), up to the next heading of the same or a higher
// level.
func Section(doc []byte, anchor string) (string, error) {
	var b strings.Builder
	level := 0 // the heading's level once found
	for _, line := range strings.Split(string(doc), "\n") {
		if l := headingLevel(line); l > 0 {
			if level > 0 && l <= level {
				break
			}
			if level == 0 && Anchor(strings.TrimSpace(line[l:])) == anchor {
				level = l
				continue
			}
		}
		if level > 0 {
			b.WriteString(line + "\n")
		}
	}
	if level == 0 {
		return "", fmt.Errorf("no heading with anchor #%s", anchor)
	}
	return b.String(), nil
}

// Anchor is the anchor GitHub gives a heading's text.
func Anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-', r == '_', r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		}
	}
	return b.String()
}

// headingLevel is the number of #s that start a Markdown heading line, or 0.
func headingLevel(line string) int {
	n := len(line) - len(strings.TrimLeft(line, "#"))
	if n == 0 || n > 6 || !strings.HasPrefix(line[n:], " ") {
		return 0
	}
	return n
}

func read(path string) ([]byte, error) {
	doc, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("failed to read %s: %w", path, err)
	}
	return doc, nil
}

// cells are the trimmed cells of a table row; `\|` in a cell is a pipe.
func cells(row string) []string {
	row = strings.TrimSpace(row)
	row = strings.TrimPrefix(row, "|")
	if strings.HasSuffix(row, "|") && !strings.HasSuffix(row, `\|`) {
		row = row[:len(row)-1]
	}
	var out []string
	var cur strings.Builder
	for i := 0; i < len(row); i++ {
		switch {
		case row[i] == '\\' && i+1 < len(row) && row[i+1] == '|':
			cur.WriteByte('|')
			i++
		case row[i] == '|':
			out = append(out, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(row[i])
		}
	}
	return append(out, strings.TrimSpace(cur.String()))
}

// isSeparator reports whether row is the line under a table's header.
func isSeparator(row string) bool {
	return strings.Trim(row, "|-: ") == ""
}
