package doctable

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
)

// Column returns the names that match name in the first cell of every row
// of the tables in the section of doc headed "## <section>" (its
// subsections included) whose header row's first cell is header. A cell
// may hold several names; each is returned once, sorted. Reading only the
// tables with that header keeps the section's other tables (rules,
// examples, metadata keys) out.
func Column(doc []byte, section, header string, name *regexp.Regexp) ([]string, error) {
	var out []string
	// inSection: under the section's heading; inTable: in a table's rows;
	// wanted: that table's header is header.
	inSection, found, inTable, wanted := false, false, false, false
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
			inTable, wanted = true, firstCell(line) == header
		case wanted && !isSeparator(line):
			out = append(out, name.FindAllString(firstCell(line), -1)...)
		}
	}
	if !found {
		return nil, fmt.Errorf("no section %q", "## "+section)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// File is Column over the document at path.
func File(path, section, header string, name *regexp.Regexp) ([]string, error) {
	doc, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("failed to read %s: %w", path, err)
	}
	out, err := Column(doc, section, header, name)
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

// firstCell is the trimmed text of a table row's first cell.
func firstCell(row string) string {
	cells := strings.Split(row, "|")
	if len(cells) < 3 {
		return ""
	}
	return strings.TrimSpace(cells[1])
}

// isSeparator reports whether row is the line under a table's header.
func isSeparator(row string) bool {
	return strings.Trim(row, "|-: ") == ""
}
