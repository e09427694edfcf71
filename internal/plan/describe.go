package plan

import (
	"strings"

	"github.com/templatedrift/template-drift-controller/internal/manifest"
)

// Describe says, in the words every report uses (the condition, the
// events, the diff command, the preview), what a pass does with a template
// that is not simply in sync: acted is whether the pass writes. ok is false
// for a template with nothing to say. The drifted fields are the caller's
// to add: each format shows them its own way.
func Describe(t TemplatePlan, acted bool) (line string, ok bool) {
	switch {
	case t.Outcome == OutcomeFailed, t.Outcome == OutcomeBlocked:
		return t.Message, true
	case t.Outcome == OutcomeWaiting:
		return "waiting for deletion to finish", true
	case t.Outcome == OutcomeHeld:
		return held(t, true), true
	case t.Outcome == OutcomeAwaitingRollout:
		return awaiting(t), true
	case t.ConsumersBehind() && !acted:
		return "rotated to " + t.RenameTo() + " earlier, but consumers reference another object; would repoint them to " +
			t.RenameTo() + ", rolls machines: " + yesNo(t.RollsMachines), true
	case t.Outcome == OutcomeCorrected || (acted && (t.Outcome == OutcomeDrifted || t.Outcome == OutcomeMissing)):
		if len(t.HeldBy()) > 0 {
			return held(t, true), true
		}
		return done(t), true
	case t.Restored && acted:
		return "matches the manifest again, consumers repointed back to it, rolls machines: " + yesNo(t.RollsMachines), true
	case t.Restored:
		return "matches the manifest again, would repoint consumers back to it, rolls machines: " + yesNo(t.RollsMachines), true
	case t.Outcome == OutcomeMissing:
		return "missing, would recreate from the manifest, rolls machines: no", true
	case len(t.HeldBy()) > 0:
		return held(t, false), true
	case t.Outcome == OutcomeDrifted:
		return "would " + string(t.Strategy) + renamed(t) + ", rolls machines: " + yesNo(t.RollsMachines), true
	}
	return "", false
}

// awaiting says what a correction held back for its rollout would do,
// the Machines it would replace, and what it waits for.
func awaiting(t TemplatePlan) string {
	r := t.Rollout
	what := "would rotate to " + r.To
	switch {
	case r.Back(t.ID):
		what = "matches the manifest again; would repoint consumers back to it"
	case r.Was != OutcomeDrifted:
		what = "rotated to " + r.To + " earlier, but consumers reference another object; would repoint them to " + r.To
	}
	wait := "waits for approval of rollout " + r.ID
	if r.State == RolloutAwaitingBudget {
		wait = "rollout " + r.ID + " may be made and waits for the rollout budget"
	}
	return wait + ": " + what + ", replacing the Machines of " + Rolled(r.Consumers)
}

// Rolled names the consumers a rollout repoints with their Machines:
// "MachineDeployment ns/md0 (2 Machines), ...".
func Rolled(consumers []RolledConsumer) string {
	out := make([]string, 0, len(consumers))
	for _, c := range consumers {
		out = append(out, c.ID.Kind+" "+c.ID.Namespace+"/"+c.ID.Name+" ("+c.Machines.String()+")")
	}
	return strings.Join(out, ", ")
}

// held says that a rotation is in effect (done), or would be, for the
// release's consumers while consumers outside the release keep the drifted
// original in use.
func held(t TemplatePlan, done bool) string {
	verb := "would rotate to "
	if done {
		verb = "rotated to "
	}
	return verb + t.RenameTo() + " for the release's consumers, rolls machines: " + yesNo(t.RollsMachines) +
		"; still in use, with its drift, by " + IDs(t.HeldBy()) + " (not of this release, never repointed)"
}

// done says what a correction did, from the strategy alone.
func done(t TemplatePlan) string {
	switch t.Strategy {
	case StrategyInPlace:
		return "corrected in place, rolls machines: no"
	case StrategyRotate:
		return "rotated to " + t.RenameTo() + ", rolls machines: " + yesNo(t.RollsMachines)
	default:
		return "recreated, rolls machines: no"
	}
}

func renamed(t TemplatePlan) string {
	if t.RenameTo() == "" {
		return ""
	}
	return " to " + t.RenameTo()
}

// IDs names objects "<Kind> <ns>/<name>", in the order given.
func IDs(in []manifest.ID) string {
	out := make([]string, 0, len(in))
	for _, id := range in {
		out = append(out, id.Kind+" "+id.Namespace+"/"+id.Name)
	}
	return strings.Join(out, ", ")
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
