package preview

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// SchemaVersion is the version of the -o json schema
// (docs/preview.schema.json), which a change that a reader could trip on
// raises.
const SchemaVersion = 2

// WriteJSON writes the reports as one JSON document:
// {"version": SchemaVersion, "releases": [...]}.
func WriteJSON(w io.Writer, reports []Report) error {
	// Lists are [] in JSON, never null.
	out := make([]Report, len(reports))
	for i, r := range reports {
		r.Objects = append([]Object{}, r.Objects...)
		for j := range r.Objects {
			o := &r.Objects[j]
			if o.Reasons == nil {
				o.Reasons = []string{}
			}
			if o.Changes == nil {
				o.Changes = []FieldChange{}
			}
		}
		out[i] = r
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		Version  int      `json:"version"`
		Releases []Report `json:"releases"`
	}{Version: SchemaVersion, Releases: out})
}

// WriteText writes one table per release: object, change, after the
// upgrade, rolls, note; then the total line.
func WriteText(w io.Writer, reports []Report) error {
	var b strings.Builder
	for _, r := range reports {
		if r.Error != "" {
			fmt.Fprintf(&b, "HelmRelease %s\ncannot preview: %s\n\n", r.HelmRelease, r.Error)
			continue
		}
		fmt.Fprintf(&b, "HelmRelease %s (chart %s, %s%s)\n", r.HelmRelease, r.Chart, r.ApplyMethod, newMark(r))
		tw := tabwriter.NewWriter(&b, 0, 4, 3, ' ', 0)
		fmt.Fprintln(tw, "OBJECT\tCHANGE\tAFTER THE UPGRADE\tROLLS\tNOTE")
		for _, o := range r.Objects {
			if !o.shown() {
				continue
			}
			fmt.Fprintf(tw, "%s/%s\t%s\t%s\t%s\t%s\n", o.Kind, o.Name, o.Change, after(o), rolls(o), note(o))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		for _, o := range r.Objects {
			if len(o.Changes) > 0 {
				fmt.Fprintf(&b, "%s/%s:\n    %s\n", o.Kind, o.Name, strings.Join(fieldLines(o), "\n    "))
			}
		}
		if r.Changes() == 0 {
			fmt.Fprintln(&b, "nothing changes")
		}
		if l := addonLine(r); l != "" {
			fmt.Fprintln(&b, l)
		}
		fmt.Fprintln(&b)
	}
	fmt.Fprintln(&b, Summary(reports))
	// The table's last column is often empty: no padding at line ends.
	lines := strings.Split(b.String(), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	_, err := io.WriteString(w, strings.Join(lines, "\n"))
	return err
}
