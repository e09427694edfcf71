package diff

import (
	"testing"

	. "github.com/onsi/gomega"
)

func TestSummary(t *testing.T) {
	changes := []Change{
		{Path: "/spec/a", Op: OpReplace, Before: "http://10.10.10.17/x", After: "http://192.168.100.2/x"},
		{Path: "/spec/b", Op: OpAdd, After: map[string]any{"k": int64(1)}},
		{Path: "/spec/c", Op: OpRemove, Before: true},
		{Path: "/spec/d", Op: OpReplace, Before: "ümlaut", After: nil},
	}
	cases := []struct {
		name       string   // what the case proves
		changes    []Change // input
		maxValue   int      // rune limit per value
		maxChanges int      // change limit
		want       string   // exact summary
	}{{
		name:    "no limits, absent values and JSON-encoded values",
		changes: changes,
		want: `/spec/a: "http://10.10.10.17/x" → "http://192.168.100.2/x"; /spec/b: <absent> → {"k":1}; ` +
			`/spec/c: true → <absent>; /spec/d: "ümlaut" → null`,
	}, {
		name:     "values are truncated to maxValue runes with an ellipsis",
		changes:  changes[3:],
		maxValue: 3,
		want:     `/spec/d: "üm… → nul…`,
	}, {
		name:       "at most maxChanges changes then the count of the rest",
		changes:    changes,
		maxChanges: 2,
		want:       `/spec/a: "http://10.10.10.17/x" → "http://192.168.100.2/x"; /spec/b: <absent> → {"k":1}; (+2 more)`,
	}, {
		name:       "a limit equal to the count adds nothing",
		changes:    changes[:1],
		maxValue:   24,
		maxChanges: 1,
		want:       `/spec/a: "http://10.10.10.17/x" → "http://192.168.100.2/x"`,
	}, {
		name: "no changes is empty",
		want: ``,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(Summary(tc.changes, tc.maxValue, tc.maxChanges)).To(Equal(tc.want))
		})
	}
}
