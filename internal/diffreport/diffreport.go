// Package diffreport renders a read-only pass for people and scripts: the
// `diff` command's text, JSON and markdown output and its exit codes, for
// one HelmRelease or a fleet (fleet.go), and the table the demo prints. It
// reads the plan's outcomes and decides nothing.
package diffreport

import (
	"encoding/json"

	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/templatedrift/template-drift-controller/internal/pipeline"
	"github.com/templatedrift/template-drift-controller/internal/plan"
)

// Exit codes of the diff command, as `diff(1)` uses them.
const (
	ExitInSync = 0
	ExitDrift  = 1
	ExitError  = 2
)

// ErrorReason is the reason of a fleet's row for a HelmRelease whose diff
// failed (the API server unreachable, a timeout): the others are diffed.
const ErrorReason = "Error"

// DiffReport is the read-only view of one pass that the diff command and
// the demo print: each template, its drift, and what auto would do.
type DiffReport struct {
	HelmRelease string `json:"helmRelease"`
	Release     string `json:"release,omitempty"`
	InSync      bool   `json:"inSync"`
	// Reason and Message explain a pass that could not look at templates
	// (release unavailable, Helm in flight, invalid configuration, a Cluster
	// missing or being deleted, a paused Cluster or object).
	Reason    string         `json:"reason,omitempty"`
	Message   string         `json:"message,omitempty"`
	Templates []DiffTemplate `json:"templates"`
	Consumers []DiffConsumer `json:"consumers,omitempty"`
	// Prune names the unused replacements the add-on created for the
	// release, which a pass in enabled mode deletes.
	Prune []string `json:"prune,omitempty"`
}

// DiffTemplate is one template of the release.
type DiffTemplate struct {
	Kind          string `json:"kind"`
	Name          string `json:"name"`
	State         string `json:"state"`
	Strategy      string `json:"strategy,omitempty"`
	Replacement   string `json:"replacement,omitempty"`
	RollsMachines bool   `json:"rollsMachines"`
	Skipped       string `json:"skipped,omitempty"`
	Failed        string `json:"failed,omitempty"`
	// Blocked explains a correction that cannot stick (CorrectionBlocked).
	Blocked string `json:"blocked,omitempty"`
	// Conflict names the other Helm release that owns the live template
	// (state Conflict, OwnershipConflict): it is never written.
	Conflict string `json:"conflict,omitempty"`
	// HeldBy names the consumers outside the release that keep the
	// drifted original of a rotation in use.
	HeldBy []string `json:"heldBy,omitempty"`
	// Action says what a pass would do with it (plan.Describe), for a
	// template whose state differs from its manifest.
	Action string `json:"action,omitempty"`
	// Rollout is the rollout of Machines the correction makes, or waits
	// to make, with the id that approves it.
	Rollout *DiffRollout `json:"rollout,omitempty"`
	Changes []DiffChange `json:"changes,omitempty"`
}

// DiffRollout is a correction's rollout of Machines (plan.MachineRollout).
type DiffRollout struct {
	ID string `json:"id"`
	// State is Allowed, Approved, AwaitingApproval or AwaitingBudget.
	State     string           `json:"state"`
	Consumers []RolledConsumer `json:"consumers"`
}

// RolledConsumer is a consumer a rollout repoints; Machines is null when
// its count is not known.
type RolledConsumer struct {
	Kind     string `json:"kind"`
	Name     string `json:"name"`
	Machines *int64 `json:"machines"`
}

// DiffConsumer is a consumer whose references a correction rewrites.
// A consumer another Helm release owns is listed with Conflict and no
// changes: it is never written.
type DiffConsumer struct {
	Kind     string       `json:"kind"`
	Name     string       `json:"name"`
	Changes  []DiffChange `json:"changes"`
	Conflict string       `json:"conflict,omitempty"`
}

// DiffChange is one drifted field.
type DiffChange struct {
	Path   string `json:"path"`
	Op     string `json:"op"`
	Before any    `json:"before,omitempty"`
	After  any    `json:"after,omitempty"`
}

// NewDiffReport builds the report of res for the HelmRelease named hr.
func NewDiffReport(hr string, res *pipeline.Result) DiffReport {
	// The condition's own verdict: the diff and the condition never
	// disagree about a release being in sync.
	c := plan.Conclude(res.Decisions, res.Err, res.Writes)
	d := DiffReport{HelmRelease: hr, InSync: c.Status == metav1.ConditionTrue, Templates: []DiffTemplate{}}
	if res.Release != nil {
		d.Release = res.Release.Ref()
	}
	if v := res.Verdict; v != nil {
		d.InSync, d.Reason, d.Message = false, v.Reason, v.Message
		return d
	}
	for _, t := range res.Templates {
		d.Templates = append(d.Templates, TemplateOf(t))
	}
	for _, c := range res.Consumers {
		if len(c.Changes) == 0 {
			continue
		}
		dc := DiffConsumer{Kind: c.ID.Kind, Name: c.ID.Name}
		for _, ch := range c.Changes {
			dc.Changes = append(dc.Changes, DiffChange{Path: ch.Path, Op: string(ch.Op), Before: ch.Before, After: ch.After})
		}
		d.Consumers = append(d.Consumers, dc)
	}
	for _, c := range res.Conflicts {
		d.Consumers = append(d.Consumers, DiffConsumer{Kind: c.ID.Kind, Name: c.ID.Name, Changes: []DiffChange{}, Conflict: "owned by release " + c.Owner})
	}
	for _, o := range res.Prune {
		d.Prune = append(d.Prune, o.GetKind()+" "+o.GetNamespace()+"/"+o.GetName())
	}
	return d
}

// TemplateOf is the report of one template's plan.
func TemplateOf(t plan.TemplatePlan) DiffTemplate {
	dt := DiffTemplate{Kind: t.ID.Kind, Name: t.ID.Name, State: string(t.Outcome), Strategy: string(t.Strategy),
		Replacement: t.RenameTo(), RollsMachines: t.RollsMachines}
	switch t.Outcome {
	case plan.OutcomeSkipped:
		dt.Skipped = t.Message
	case plan.OutcomeFailed:
		dt.Failed = t.Message
	case plan.OutcomeBlocked:
		dt.Blocked = t.Message
	case plan.OutcomeConflict:
		dt.Conflict = t.Message
	}
	for _, h := range t.HeldBy() {
		dt.HeldBy = append(dt.HeldBy, h.Kind+" "+h.Namespace+"/"+h.Name)
	}
	if t.Outcome.Differs() || len(t.HeldBy()) > 0 {
		dt.Action, _ = plan.Describe(t, false)
	}
	if r := t.Rollout; r != nil {
		dt.Rollout = &DiffRollout{ID: r.ID, State: string(r.State), Consumers: []RolledConsumer{}}
		for _, c := range r.Consumers {
			rc := RolledConsumer{Kind: c.ID.Kind, Name: c.ID.Name}
			if c.Machines.Known {
				rc.Machines = &c.Machines.N
			}
			dt.Rollout.Consumers = append(dt.Rollout.Consumers, rc)
		}
	}
	for _, c := range t.Changes {
		dt.Changes = append(dt.Changes, DiffChange{Path: c.Path, Op: string(c.Op), Before: c.Before, After: c.After})
	}
	return dt
}

// ExitCode is 0 in sync, 1 when drift is found, 2 when the pass could not
// look at the templates.
func (d DiffReport) ExitCode() int {
	switch {
	case d.Reason != "":
		return ExitError
	case !d.InSync:
		return ExitDrift
	}
	return ExitInSync
}

// WriteJSON writes the report as indented JSON.
func (d DiffReport) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(d)
}

// WriteText writes the report for a person: one block per template that is
// not in sync, then the consumers a correction would repoint.
func (d DiffReport) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "HelmRelease %s", d.HelmRelease)
	if d.Release != "" {
		fmt.Fprintf(&b, " (release %s)", d.Release)
	}
	b.WriteString("\n")
	if d.Reason != "" {
		fmt.Fprintf(&b, "cannot diff: %s: %s\n", d.Reason, d.Message)
		_, err := io.WriteString(w, b.String())
		return err
	}
	for _, t := range d.Templates {
		s, drifted := t.status()
		fmt.Fprintf(&b, "  %s/%s: %s\n", t.Kind, t.Name, s)
		if !drifted {
			continue
		}
		for _, c := range t.Changes {
			fmt.Fprintf(&b, "      %s: %s → %s\n", c.Path, value(c.Before, 200), value(c.After, 200))
		}
	}
	for _, c := range d.Consumers {
		if c.Conflict != "" {
			fmt.Fprintf(&b, "  %s/%s: %s\n", c.Kind, c.Name, untouched(c.Conflict))
		}
		for _, ch := range c.Changes {
			fmt.Fprintf(&b, "  %s/%s: %s %s: %s → %s\n", c.Kind, c.Name, repointStatus, ch.Path, value(ch.Before, 200), value(ch.After, 200))
		}
	}
	for _, p := range d.Prune {
		fmt.Fprintf(&b, "  %s: %s\n", p, pruneStatus)
	}
	fmt.Fprintf(&b, "%d of %d templates drifted\n", d.drifted(), len(d.Templates))
	_, err := io.WriteString(w, b.String())
	return err
}

// status says how a template stands, as the text and markdown outputs
// write it, and whether it counts as drifted: then it is the action a pass
// would take.
func (t DiffTemplate) status() (string, bool) {
	switch {
	case t.Skipped != "":
		return "skipped (" + t.Skipped + ")", false
	case t.Conflict != "":
		return untouched(t.Conflict), false
	case !differs(t) && len(t.HeldBy) == 0 && t.Replacement != "":
		return "in sync through its replacement " + t.Replacement + " (rotated earlier)", false
	case !differs(t) && len(t.HeldBy) == 0:
		return "in sync", false
	}
	return t.Action, true
}

// drifted counts the templates that count as drifted.
func (d DiffReport) drifted() int {
	n := 0
	for _, t := range d.Templates {
		if _, drifted := t.status(); drifted {
			n++
		}
	}
	return n
}

// WriteTable writes one row per drifted field: template, field, before,
// after, strategy and whether machines roll. The demo prints it.
func (d DiffReport) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TEMPLATE\tFIELD\tBEFORE\tAFTER\tSTRATEGY\tROLLS MACHINES")
	for _, t := range d.Templates {
		if !differs(t) {
			continue
		}
		strategy := t.Strategy
		if t.Replacement != "" {
			strategy += " → " + t.Replacement
		}
		for _, c := range t.Changes {
			fmt.Fprintf(tw, "%s/%s\t%s\t%s\t%s\t%s\t%s\n", t.Kind, t.Name, c.Path, value(c.Before, 48), value(c.After, 48), strategy, yesNo(t.RollsMachines))
		}
	}
	return tw.Flush()
}

// value renders a JSON value for people, cut to limit runes.
func value(v any, limit int) string {
	if v == nil {
		return "<absent>"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	s := string(b)
	if r := []rune(s); len(r) > limit {
		s = string(r[:limit]) + "…"
	}
	return s
}

// differs reads the outcome a template was reported with.
func differs(t DiffTemplate) bool {
	return plan.Outcome(t.State).Differs()
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
