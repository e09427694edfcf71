package plan

import (
	"fmt"
	"strings"

	"github.com/templatedrift/template-drift-controller/api"
)

// blockedMessage explains a correction that cannot stick: why the recreate
// cannot complete, why a rotation would not stick either (when the user
// left the choice to auto), and the ways out. It is built from the facts
// only, so it reads the same on every pass and no event repeats.
func blockedMessage(in TemplateInput, why string) string {
	var b strings.Builder
	if in.Requested == StrategyRecreate {
		fmt.Fprintf(&b, "correction blocked: strategy recreate would delete the template, and the delete cannot complete: %s; nothing was deleted", why)
	} else {
		fmt.Fprintf(&b, "correction blocked: the server refuses the change in place, a recreate cannot complete (%s), and a rotation would not stick: %s; nothing was written",
			why, strings.Join(whys(in.Helm), " and "))
	}
	b.WriteString(". Ways out: " + strings.Join(waysOut(in), ", or "))
	return b.String()
}

// waysOut lists what the user can change so that a correction sticks.
func waysOut(in TemplateInput) []string {
	rotate := waysOutOf(in.Helm)
	var out []string
	switch {
	case in.Requested == StrategyRecreate && len(rotate) == 0:
		out = append(out, fmt.Sprintf("set %s to auto, which corrects in place where the server accepts it and rotates otherwise", api.StrategyAnnotation))
	case in.Requested == StrategyRecreate:
		out = append(out, strings.Join(rotate, " and ")+fmt.Sprintf(" and set %s to auto, after which it rotates", api.StrategyAnnotation))
	default:
		out = append(out, strings.Join(rotate, " and ")+", after which auto rotates")
	}
	return append(out, "give the template a new name in the chart")
}

// whys says why Helm would set a repointed reference back.
func whys(h HelmFacts) []string {
	var out []string
	for _, r := range h.reassertions() {
		out = append(out, r.why)
	}
	return out
}

// waysOutOf says what the user can change so that Helm keeps a repointed
// reference.
func waysOutOf(h HelmFacts) []string {
	var out []string
	for _, r := range h.reassertions() {
		out = append(out, r.wayOut)
	}
	return out
}
