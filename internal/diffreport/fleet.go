package diffreport

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// What the text and markdown outputs say of a consumer or a replacement
// beside the templates.
const (
	repointStatus = "would repoint"
	pruneStatus   = "unused replacement, would be deleted"
)

// untouched says that an object another Helm release owns is left alone.
func untouched(conflict string) string {
	return "not this release's, left untouched (" + conflict + ")"
}

// Fleet is the reports of one diff command, in the order of its
// HelmReleases: a fleet selected by -l or -A, or one named HelmRelease.
type Fleet []DiffReport

// ExitCode is the worst of the reports' exit codes: 2 when a pass could not
// look at a release's templates, else 1 when a release is not in sync,
// else 0 (also when nothing was selected).
func (f Fleet) ExitCode() int {
	code := ExitInSync
	for _, d := range f {
		// ExitInSync < ExitDrift < ExitError.
		code = max(code, d.ExitCode())
	}
	return code
}

// Summary is the total line of a fleet's diff: "12 releases: 3 not in
// sync, 1 could not be diffed".
func (f Fleet) Summary() string {
	var notInSync, failed int
	for _, d := range f {
		switch d.ExitCode() {
		case ExitDrift:
			notInSync++
		case ExitError:
			failed++
		}
	}
	releases := "releases"
	if len(f) == 1 {
		releases = "release"
	}
	return fmt.Sprintf("%d %s: %d not in sync, %d could not be diffed", len(f), releases, notInSync, failed)
}

// WriteText writes each report as DiffReport.WriteText does, a blank line
// after each, then the total line.
func (f Fleet) WriteText(w io.Writer) error {
	for _, d := range f {
		if err := d.WriteText(w); err != nil {
			return err
		}
		if _, err := io.WriteString(w, "\n"); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintln(w, f.Summary())
	return err
}

// WriteJSON writes the reports as one JSON document, {"releases": [...]},
// each as DiffReport.WriteJSON writes it.
func (f Fleet) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(struct {
		Releases []DiffReport `json:"releases"`
	}{Releases: append([]DiffReport{}, f...)})
}

// WriteMarkdown writes the reports for a pull-request comment or a CI
// job's summary: the total line, then for each release a table of what is
// not in sync (one row per drifted field) and its count of drifted
// templates.
func (f Fleet) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "**%s**\n\n", f.Summary())
	for _, d := range f {
		fmt.Fprintf(&b, "### HelmRelease `%s`", d.HelmRelease)
		if d.Release != "" {
			fmt.Fprintf(&b, " (release `%s`)", d.Release)
		}
		b.WriteString("\n\n")
		if d.Reason != "" {
			fmt.Fprintf(&b, "Cannot diff: %s: %s\n\n", d.Reason, d.Message)
			continue
		}
		if rows := d.markdownRows(); len(rows) > 0 {
			b.WriteString("| object | diff | field | before | after |\n|---|---|---|---|---|\n")
			b.WriteString(strings.Join(rows, ""))
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "%d of %d templates drifted.\n\n", d.drifted(), len(d.Templates))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// markdownRows are the table rows of what is not in sync: the templates
// that are not (with a row per drifted field), the consumers to repoint,
// the replacements to delete.
func (d DiffReport) markdownRows() []string {
	var rows []string
	row := func(object, status string, c *DiffChange) {
		var field, before, after string
		if c != nil {
			field, before, after = code(c.Path), code(value(c.Before, 200)), code(value(c.After, 200))
		}
		rows = append(rows, fmt.Sprintf("| %s | %s | %s | %s | %s |\n", code(object), cell(status), field, before, after))
	}
	for _, t := range d.Templates {
		s, drifted := t.status()
		switch {
		case drifted && len(t.Changes) > 0:
			for i := range t.Changes {
				row(t.Kind+"/"+t.Name, s, &t.Changes[i])
			}
		case drifted, t.Skipped != "", t.Conflict != "":
			row(t.Kind+"/"+t.Name, s, nil)
		}
	}
	for _, c := range d.Consumers {
		if c.Conflict != "" {
			row(c.Kind+"/"+c.Name, untouched(c.Conflict), nil)
		}
		for i := range c.Changes {
			row(c.Kind+"/"+c.Name, repointStatus, &c.Changes[i])
		}
	}
	for _, p := range d.Prune {
		row(p, pruneStatus, nil)
	}
	return rows
}

// cell writes s in a table cell: on one line, its pipes escaped.
func cell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\n", " "), "|", `\|`)
}

// code writes s as a code span in a table cell.
func code(s string) string {
	s = cell(s)
	if strings.Contains(s, "`") {
		return "`` " + s + " ``"
	}
	return "`" + s + "`"
}
