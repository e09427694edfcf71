package preview

import (
	"fmt"
	"strings"

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
	// New: the HelmRelease is not on the cluster; Objects are what its
	// install would create.
	New bool `json:"new"`
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
	// Changes are the fields an update changes, at most as many as the
	// TemplatesInSync condition shows; MoreChanges counts the others.
	Changes     []FieldChange `json:"changes"`
	MoreChanges int           `json:"moreChanges"`
	// Drift is, for a template, what the add-on sees of it now and after
	// the upgrade, and what it then does; nil for other kinds and for
	// objects the upgrade deletes.
	Drift *Drift `json:"drift,omitempty"`

	id       manifest.ID
	template bool
}

// newMark marks the heading of a HelmRelease that is not on the cluster.
func newMark(r Report) string {
	if r.New {
		return ", new"
	}
	return ""
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
