package preview

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/plan"
)

// The changes an upgrade makes to one object (plan.UpgradeChange).
const (
	ChangeNone    = string(plan.UpgradeUnchanged)
	ChangeCreate  = string(plan.UpgradeCreate)
	ChangeUpdate  = string(plan.UpgradeUpdate)
	ChangeDelete  = string(plan.UpgradeDelete)
	ChangeRefused = string(plan.UpgradeRefused)
)

// Report is the preview of one HelmRelease's upgrade. Its JSON form is the
// `-o json` schema, documented in docs/reference.md.
type Report struct {
	// HelmRelease is namespace/name.
	HelmRelease string `json:"helmRelease"`
	// Chart is the rendered chart's name@version.
	Chart string `json:"chart"`
	// ApplyMethod is how Helm would apply it: ssa or csa.
	ApplyMethod string `json:"applyMethod"`
	// Objects are the objects the new manifest renders, then those it
	// drops, in the manifest's order.
	Objects []Object `json:"objects"`
	// AddonMode is the HelmRelease's mode for the add-on (enabled, warn
	// or disabled): with enabled, it makes the corrections the templates'
	// drift.addon says; otherwise it only reports them, or nothing.
	AddonMode string `json:"addonMode"`
	// Addon is why the add-on's pass would not look at the templates (a
	// TemplatesInSync reason and message: the Cluster is paused, Helm is
	// in flight, …); empty when it would.
	Addon string `json:"addon,omitempty"`
	// Error is why a HelmRelease of a fleet could not be previewed (the
	// others were); its other fields are then empty.
	Error string `json:"error,omitempty"`
}

// HelmInFlight reports whether Helm is acting on the release (Addon is
// ReleaseInProgress): the upgrade would start from a release that is not
// settled, so the preview cannot be trusted.
func (r Report) HelmInFlight() bool {
	return strings.HasPrefix(r.Addon, api.ReleaseInProgressReason+":")
}

// Object is what the upgrade does to one object.
type Object struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Change is unchanged, create, update, delete or refused.
	Change string `json:"change"`
	// Fails: the server refuses the change, so the upgrade fails;
	// Message is the server's (the webhook's) answer.
	Fails   bool   `json:"fails"`
	Message string `json:"message"`
	// Rolls: Cluster API replaces the consumer's Machines, Machines of
	// them (nil when it does not roll or its object does not say), for
	// Reasons (never null in JSON).
	Rolls    bool     `json:"rolls"`
	Machines *int64   `json:"machines,omitempty"`
	Reasons  []string `json:"reasons"`
	// Note says what the change means otherwise.
	Note string `json:"note"`
	// Drift is, for a template, what the add-on sees of it now and after
	// the upgrade, and what it then does; nil for other kinds and for
	// objects the upgrade deletes.
	Drift *Drift `json:"drift,omitempty"`

	id       manifest.ID
	template bool
}

// shown reports whether the object has a row in the text and markdown
// tables: the upgrade changes it, or it differs from the manifest now or
// after the upgrade.
func (o Object) shown() bool {
	return o.Change != ChangeNone || (o.Drift != nil && o.Drift.Fate != string(plan.DriftNone))
}

// Fails reports whether the upgrade would fail.
func (r Report) Fails() bool {
	for _, o := range r.Objects {
		if o.Fails {
			return true
		}
	}
	return false
}

// RolledMachines counts the Machines the upgrade would replace (of the
// consumers whose count is known), and the consumers that roll.
func (r Report) RolledMachines() (machines, consumers int) {
	for _, o := range r.Objects {
		if o.Rolls {
			if o.Machines != nil {
				machines += int(*o.Machines)
			}
			consumers++
		}
	}
	return machines, consumers
}

// Changes counts the objects the upgrade changes.
func (r Report) Changes() int {
	n := 0
	for _, o := range r.Objects {
		if o.Change != ChangeNone {
			n++
		}
	}
	return n
}

// FailOn is how much a preview must predict for the command to exit 1.
type FailOn string

// The --fail-on levels, from the least to the most.
const (
	FailOnFailure FailOn = "failure"
	FailOnRollout FailOn = "rollout"
	FailOnChange  FailOn = "change"
)

// Exit codes of the preview command.
const (
	ExitOK    = 0
	ExitFound = 1
	ExitError = 2
)

// ParseFailOn reads a --fail-on value.
func ParseFailOn(s string) (FailOn, error) {
	switch f := FailOn(s); f {
	case FailOnFailure, FailOnRollout, FailOnChange:
		return f, nil
	}
	return "", fmt.Errorf("--fail-on %q: want failure, rollout or change", s)
}

// ExitCode is 1 when the reports predict as much as f or more: a failure
// (failure), a failure or a rollout (rollout), or any change (change); and
// whatever f, when Helm is in flight on a release (the prediction cannot
// be trusted).
func ExitCode(reports []Report, f FailOn) int {
	for _, r := range reports {
		if r.Error != "" {
			return ExitError
		}
	}
	for _, r := range reports {
		machines, consumers := r.RolledMachines()
		switch {
		case r.Fails(), r.HelmInFlight(),
			f != FailOnFailure && (consumers > 0 || machines > 0),
			f == FailOnChange && r.Changes() > 0:
			return ExitFound
		}
	}
	return ExitOK
}

// Summary is the total line of a fleet's preview: "12 releases: 3 roll 27
// Machines, 1 upgrade would fail".
func Summary(reports []Report) string {
	var rolling, machines, failing, errored int
	for _, r := range reports {
		if r.Error != "" {
			errored++
		}
		m, c := r.RolledMachines()
		if c > 0 {
			rolling++
			machines += m
		}
		if r.Fails() {
			failing++
		}
	}
	line := fmt.Sprintf("%d %s: %d roll %d %s, %d %s fail", len(reports), plural(len(reports), "release", "releases"),
		rolling, machines, plural(machines, "Machine", "Machines"), failing, plural(failing, "upgrade would", "upgrades would"))
	if errored > 0 {
		line += fmt.Sprintf(", %d could not be previewed", errored)
	}
	return line
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// WriteJSON writes the reports as one JSON document: {"releases": [...]}.
func WriteJSON(w io.Writer, reports []Report) error {
	// Lists are [] in JSON, never null.
	out := make([]Report, len(reports))
	for i, r := range reports {
		r.Objects = append([]Object{}, r.Objects...)
		for j := range r.Objects {
			if r.Objects[j].Reasons == nil {
				r.Objects[j].Reasons = []string{}
			}
		}
		out[i] = r
	}
	reports = out
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		Releases []Report `json:"releases"`
	}{Releases: reports})
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
		fmt.Fprintf(&b, "HelmRelease %s (chart %s, %s)\n", r.HelmRelease, r.Chart, r.ApplyMethod)
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
		fmt.Fprintf(&b, "<details%s><summary>HelmRelease <code>%s</code> (chart <code>%s</code>, %s): %s</summary>\n\n",
			open, html.EscapeString(r.HelmRelease), html.EscapeString(r.Chart), r.ApplyMethod, html.EscapeString(outcomeLine(r)))
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
	b.WriteString("| object | change | after the upgrade | rolls | note |\n|---|---|---|---|---|\n")
	for _, o := range r.Objects {
		if !o.shown() {
			continue
		}
		fmt.Fprintf(b, "| `%s/%s` | %s | %s | %s | %s |\n", o.Kind, o.Name, o.Change, cell(after(o)), rolls(o), cell(note(o)))
	}
	b.WriteString("\n")
}

// outcomeLine is a release's summary: whether its upgrade would fail, the
// Machines it rolls, how many objects change, or that nothing does.
func outcomeLine(r Report) string {
	var parts []string
	if r.HelmInFlight() {
		parts = append(parts, "Helm is acting on the release, no prediction")
	}
	if r.Fails() {
		parts = append(parts, "the upgrade would fail")
	}
	if m, c := r.RolledMachines(); c > 0 {
		parts = append(parts, fmt.Sprintf("rolls %d %s", m, plural(m, "Machine", "Machines")))
	}
	if n := r.Changes(); n > 0 {
		parts = append(parts, fmt.Sprintf("%d %s", n, plural(n, "object changes", "objects change")))
	}
	if len(parts) == 0 {
		return "nothing changes"
	}
	return strings.Join(parts, ", ")
}

func after(o Object) string {
	var s string
	switch {
	case o.Fails:
		s = "the upgrade fails"
	case o.Change == ChangeDelete:
		s = "deleted"
	case o.Change == ChangeCreate:
		s = "created"
	case o.Change == ChangeNone:
		s = "unchanged"
	default:
		s = "updated"
	}
	if o.Drift == nil {
		return s
	}
	switch plan.DriftFate(o.Drift.Fate) {
	case plan.DriftHealed:
		s += ", its drift healed"
	case plan.DriftStays:
		s += ", still drifted"
	case plan.DriftAppears:
		s += ", drifted"
	}
	if o.Drift.Addon != "" {
		s += "; then the add-on: " + strings.TrimPrefix(o.Drift.Addon, "drifted, ")
	}
	return s
}

// addonLine says, under a release's table, how the add-on stands to it:
// why its pass would not look at the templates, or that it only reports.
func addonLine(r Report) string {
	switch {
	case r.Addon != "":
		return "the add-on would not look at the templates: " + r.Addon
	case r.AddonMode == string(plan.ModeWarn) && anyAddon(r):
		return "the add-on's mode is warn here: it reports the drift and corrects nothing"
	case r.AddonMode == string(plan.ModeDisabled) && anyAddon(r):
		return "the add-on is not enabled for this HelmRelease: it neither reports nor corrects the drift"
	}
	return ""
}

func anyAddon(r Report) bool {
	for _, o := range r.Objects {
		if o.Drift != nil && o.Drift.Addon != "" {
			return true
		}
	}
	return false
}

func anyShown(r Report) bool {
	for _, o := range r.Objects {
		if o.shown() {
			return true
		}
	}
	return false
}

func rolls(o Object) string {
	if !o.Rolls {
		return "no"
	}
	if o.Machines == nil {
		return "an unknown number of Machines"
	}
	return fmt.Sprintf("%d %s", *o.Machines, plural(int(*o.Machines), "Machine", "Machines"))
}

func note(o Object) string {
	parts := append([]string{}, o.Reasons...)
	if o.Message != "" {
		parts = append(parts, o.Message)
	}
	if o.Note != "" {
		parts = append(parts, o.Note)
	}
	return strings.Join(parts, "; ")
}

// cell escapes a table cell: a pipe would end it and a newline the row.
func cell(s string) string {
	return strings.NewReplacer("|", `\|`, "\r\n", "<br>", "\n", "<br>").Replace(s)
}
