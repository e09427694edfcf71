package preview

import (
	"fmt"
	"html"
	"io"
	"strings"
)

// MarkdownMarker opens the markdown output, hidden when rendered, so that a
// CI step finds the comment it posted before and updates it instead of
// adding one per push.
const MarkdownMarker = "<!-- templatedrift-preview -->"

// WriteMarkdown writes the reports for a pull-request comment: the marker,
// the fleet's total, then one collapsible section per release whose
// summary line says what its upgrade would do, open when it fails or
// rolls Machines.
func WriteMarkdown(w io.Writer, reports []Report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n**%s**\n\n", MarkdownMarker, Summary(reports))
	for _, r := range reports {
		if r.Error != "" {
			fmt.Fprintf(&b, "<details open><summary>HelmRelease <code>%s</code>: cannot preview</summary>\n\n%s\n\n</details>\n\n",
				html.EscapeString(r.HelmRelease), cell(r.Error))
			continue
		}
		open := ""
		if _, rolled := r.RolledMachines(); r.Fails() || rolled > 0 || r.HelmInFlight() {
			open = " open"
		}
		fmt.Fprintf(&b, "<details%s><summary>HelmRelease <code>%s</code> (chart <code>%s</code>, %s%s): %s</summary>\n\n",
			open, html.EscapeString(r.HelmRelease), html.EscapeString(r.Chart), r.ApplyMethod, newMark(r), html.EscapeString(outcomeLine(r)))
		writeMarkdownRelease(&b, r)
		b.WriteString("</details>\n\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeMarkdownRelease writes a release's section: how the add-on stands
// to it, then the table of what changes.
func writeMarkdownRelease(b *strings.Builder, r Report) {
	if l := addonLine(r); l != "" {
		fmt.Fprintf(b, "%s\n\n", cell(l))
	}
	if !anyShown(r) {
		b.WriteString("Nothing changes.\n\n")
		return
	}
	if r.Changes() == 0 {
		b.WriteString("Nothing changes; the templates' drift:\n\n")
	}
	b.WriteString("| object | change | after the upgrade | rolls | note | fields |\n|---|---|---|---|---|---|\n")
	for _, o := range r.Objects {
		if !o.shown() {
			continue
		}
		fields := make([]string, 0, len(o.Changes)+1)
		for _, l := range fieldLines(o) {
			fields = append(fields, "<code>"+html.EscapeString(l)+"</code>")
		}
		fmt.Fprintf(b, "| `%s/%s` | %s | %s | %s | %s | %s |\n", o.Kind, o.Name, o.Change, cell(after(o)), rolls(o), cell(note(o)), cell(strings.Join(fields, "<br>")))
	}
	b.WriteString("\n")
}
