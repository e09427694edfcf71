package diff

import (
	"encoding/json"
	"testing"

	. "github.com/onsi/gomega"
)

func TestPatch(t *testing.T) {
	cases := []struct {
		name            string   // what the case proves
		changes         []Change // input
		resourceVersion string   // optimistic-lock version, "" for none
		want            string   // exact JSON patch
	}{{
		name: "add and replace carry After, remove has no value",
		changes: []Change{
			{Path: "/spec/a", Op: OpAdd, After: map[string]any{"b": int64(1)}},
			{Path: "/spec/c", Op: OpReplace, Before: "x", After: "y"},
			{Path: "/spec/d", Op: OpRemove, Before: true},
		},
		want: `[{"op":"add","path":"/spec/a","value":{"b":1}},{"op":"replace","path":"/spec/c","value":"y"},{"op":"remove","path":"/spec/d"}]`,
	}, {
		name:            "a resource version becomes a leading optimistic-lock op",
		changes:         []Change{{Path: "/spec/a~1b", Op: OpReplace, After: "u?a=1&b=<2>"}},
		resourceVersion: "123",
		want:            `[{"op":"replace","path":"/metadata/resourceVersion","value":"123"},{"op":"replace","path":"/spec/a~1b","value":"u?a=1&b=<2>"}]`,
	}, {
		name:    "a null After is written as null",
		changes: []Change{{Path: "/spec/l/0", Op: OpReplace, Before: "y"}},
		want:    `[{"op":"replace","path":"/spec/l/0","value":null}]`,
	}, {
		name: "no changes is an empty patch",
		want: `[]`,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			got, err := Patch(tc.changes, tc.resourceVersion)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(string(got)).To(Equal(tc.want))
			g.Expect(json.Valid(got)).To(BeTrue())
		})
	}
}

func TestPatchRejectsInvalidChanges(t *testing.T) {
	cases := []struct {
		name   string // what the case proves
		change Change // the invalid change
	}{
		{name: "unknown op", change: Change{Path: "/spec/a", Op: "move"}},
		{name: "path without leading slash", change: Change{Path: "spec/a", Op: OpReplace}},
		{name: "bad escape", change: Change{Path: "/spec/~2", Op: OpReplace}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			_, err := Patch([]Change{tc.change}, "")
			g.Expect(err).To(MatchError(ErrInvalidChange))
			_, err = Apply(obj(spec(m{"a": "x"})), []Change{tc.change})
			g.Expect(err).To(MatchError(ErrInvalidChange))
		})
	}
}

func TestApply(t *testing.T) {
	g := NewWithT(t)
	live := obj(spec(m{"a": "x", "l": l{"p", "q"}, "n": int64(1)}))
	healed, err := Apply(live, []Change{
		{Path: "/spec/add", Op: OpAdd, After: map[string]any{"k": 2}},
		{Path: "/spec/l/1", Op: OpReplace, After: 1.0},
		{Path: "/spec/a", Op: OpRemove},
	})
	g.Expect(err).NotTo(HaveOccurred())
	// Numbers come back as the API server decodes them: int64 for integers.
	g.Expect(healed.Object).To(Equal(spec(m{"add": m{"k": int64(2)}, "l": l{"p", int64(1)}, "n": int64(1)})))
	// live is untouched.
	g.Expect(live.Object).To(Equal(spec(m{"a": "x", "l": l{"p", "q"}, "n": int64(1)})))
}

func TestApplyNilLiveAndNoChanges(t *testing.T) {
	g := NewWithT(t)
	healed, err := Apply(nil, []Change{{Path: "/spec", Op: OpAdd, After: map[string]any{"a": "x"}}})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(healed.Object).To(Equal(m{"spec": m{"a": "x"}}))

	live := obj(spec(m{"a": "x"}))
	same, err := Apply(live, nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(same).To(Equal(live))
	g.Expect(same).NotTo(BeIdenticalTo(live))
}

func TestApplyFailsLikeTheServer(t *testing.T) {
	g := NewWithT(t)
	live := obj(spec(m{"a": "x"}))
	_, err := Apply(live, []Change{{Path: "/spec/missing", Op: OpRemove}})
	g.Expect(err).To(MatchError(ContainSubstring("applying patch")))
	_, err = Apply(live, []Change{{Path: "/spec/no/parent", Op: OpAdd, After: "x"}})
	g.Expect(err).To(HaveOccurred())
}
