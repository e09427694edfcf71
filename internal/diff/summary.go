package diff

import (
	"fmt"
	"strings"
)

// The limits of a summary that the TemplatesInSync condition, events and
// preview's field diffs share, so that a reviewer sees in a pull request
// what the condition will say: each value cut to SummaryMaxValue runes, at
// most SummaryMaxChanges changes per object.
const (
	SummaryMaxValue   = 60
	SummaryMaxChanges = 4
)

// absent is how Summary shows a value that does not exist on that side.
const absent = "<absent>"

// Summary renders changes for conditions, events and logs, which must stay
// short: one "path: before → after" per change joined by "; ", each value
// JSON-encoded and cut to maxValue runes followed by "…", a missing value
// (the live side of OpAdd, the desired side of OpRemove) shown as "<absent>",
// and at most maxChanges changes followed by "(+N more)". maxValue or
// maxChanges <= 0 means no limit.
//
// Example: `/spec/a: 1 → 2; /spec/b: <absent> → "x"; (+3 more)`.
func Summary(changes []Change, maxValue, maxChanges int) string {
	shown := len(changes)
	if maxChanges > 0 && shown > maxChanges {
		shown = maxChanges
	}
	parts := make([]string, 0, shown+1)
	for _, ch := range changes[:shown] {
		before := summaryValue(ch.Before, ch.Op == OpAdd, maxValue)
		after := summaryValue(ch.After, ch.Op == OpRemove, maxValue)
		parts = append(parts, ch.Path+": "+before+" → "+after)
	}
	if more := len(changes) - shown; more > 0 {
		parts = append(parts, fmt.Sprintf("(+%d more)", more))
	}
	return strings.Join(parts, "; ")
}

func summaryValue(v any, isAbsent bool, maxValue int) string {
	if isAbsent {
		return absent
	}
	var s string
	if raw, err := encodeJSON(v); err == nil {
		s = string(raw)
	} else {
		s = fmt.Sprintf("%v", v)
	}
	return truncate(s, maxValue)
}

// truncate cuts s to limit runes and appends "…" when it was longer.
func truncate(s string, limit int) string {
	if limit <= 0 {
		return s
	}
	n := 0
	for i := range s {
		if n == limit {
			return s[:i] + "…"
		}
		n++
	}
	return s
}
