package diff

import (
	"encoding/json"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// m is shorthand for a JSON object in test tables.
type m = map[string]any

// l is shorthand for a JSON list in test tables.
type l = []any

// obj wraps top-level content in an Unstructured; nil content gives a nil object.
func obj(content m) *unstructured.Unstructured {
	if content == nil {
		return nil
	}
	return &unstructured.Unstructured{Object: content}
}

// spec builds an object whose only top-level field is spec.
func spec(s any) m { return m{"apiVersion": "v1", "kind": "T", "spec": s} }

type objectCase struct {
	name     string   // what the case proves
	desired  m        // manifest object (nil: nil *Unstructured)
	live     m        // cluster object (nil: nil *Unstructured)
	previous m        // previous release's object (nil: Options.Previous unset)
	ignore   []string // Options.IgnorePaths
	roots    []string // Options.Roots
	want     []Change // expected result, in order
}

// objectCases is shared by TestObject and TestApplyConverges; neither modifies
// it (TestObjectDoesNotMutateInputs proves Object and Apply do not).
var objectCases = []objectCase{{
	name:    "equal objects have no drift",
	desired: spec(m{"a": "x", "n": int64(1)}),
	live:    spec(m{"a": "x", "n": int64(1)}),
}, {
	name:    "default roots compare spec only, never metadata or status",
	desired: m{"metadata": m{"labels": m{"a": "1"}}, "status": m{"ready": true}, "data": m{"k": "v"}, "spec": m{"a": "x"}},
	live:    m{"metadata": m{"labels": m{"a": "2"}}, "status": m{"ready": false}, "data": m{"k": "w"}, "spec": m{"a": "y"}},
	want:    []Change{{Path: "/spec/a", Op: OpReplace, Before: "y", After: "x"}},
}, {
	name:    "custom roots replace the default and still skip metadata and status",
	desired: m{"metadata": m{"name": "a"}, "status": m{"x": int64(1)}, "data": m{"k": "v"}, "spec": m{"a": "x"}},
	live:    m{"metadata": m{"name": "b"}, "status": m{"x": int64(2)}, "data": m{"k": "w"}, "spec": m{"a": "y"}},
	roots:   []string{"data", "metadata", "status", "data"},
	want:    []Change{{Path: "/data/k", Op: OpReplace, Before: "w", After: "v"}},
}, {
	name:    "absent live key is added with the whole desired subtree at that key",
	desired: spec(m{"a": m{"b": m{"c": int64(1)}}, "keep": "x"}),
	live:    spec(m{"keep": "x"}),
	want:    []Change{{Path: "/spec/a", Op: OpAdd, After: m{"b": m{"c": int64(1)}}}},
}, {
	name:    "keys present only live are not drift",
	desired: spec(m{"template": m{"image": "x"}}),
	live:    spec(m{"nodeReuse": false, "template": m{"image": "x", "defaulted": "y"}}),
}, {
	name:     "a field the previous release set, gone from this one and still live, is removed",
	desired:  spec(m{"a": m{"x": int64(1)}}),
	live:     spec(m{"a": m{"x": int64(1), "y": int64(2)}}),
	previous: spec(m{"a": m{"x": int64(1), "y": int64(2)}}),
	want:     []Change{{Path: "/spec/a/y", Op: OpRemove, Before: int64(2)}},
}, {
	name:     "removal is reported at the highest key the previous release set",
	desired:  spec(m{"keep": "x"}),
	live:     spec(m{"keep": "x", "old": m{"deep": m{"k": int64(1)}}}),
	previous: spec(m{"keep": "x", "old": m{"deep": m{"k": int64(1)}}}),
	want:     []Change{{Path: "/spec/old", Op: OpRemove, Before: m{"deep": m{"k": int64(1)}}}},
}, {
	name:    "without a previous release nothing is removed",
	desired: spec(m{"keep": "x"}),
	live:    spec(m{"keep": "x", "old": "y"}),
}, {
	name:     "a previous field that is no longer live needs no removal",
	desired:  spec(m{"keep": "x"}),
	live:     spec(m{"keep": "x"}),
	previous: spec(m{"keep": "x", "old": "y"}),
}, {
	name:     "an explicit null in the previous release is not set there either",
	desired:  spec(m{"keep": "x"}),
	live:     spec(m{"keep": "x", "old": "y"}),
	previous: spec(m{"keep": "x", "old": nil}),
}, {
	name:     "a field still set by the desired release is not removed",
	desired:  spec(m{"a": "new"}),
	live:     spec(m{"a": "new"}),
	previous: spec(m{"a": "old"}),
}, {
	name:     "an explicit null in desired counts as unset for the removal rule",
	desired:  spec(m{"keep": "x", "old": nil}),
	live:     spec(m{"keep": "x", "old": "y"}),
	previous: spec(m{"keep": "x", "old": "y"}),
	want:     []Change{{Path: "/spec/old", Op: OpRemove, Before: "y"}},
}, {
	name:     "removal inside list items uses the previous list when it lines up",
	desired:  spec(m{"items": l{m{"name": "a"}}}),
	live:     spec(m{"items": l{m{"name": "a", "extra": true}}}),
	previous: spec(m{"items": l{m{"name": "a", "extra": true}}}),
	want:     []Change{{Path: "/spec/items/0/extra", Op: OpRemove, Before: true}},
}, {
	name:     "a previous list of another length is not used for removals",
	desired:  spec(m{"items": l{m{"name": "a"}}}),
	live:     spec(m{"items": l{m{"name": "a", "extra": true}}}),
	previous: spec(m{"items": l{m{"name": "a", "extra": true}, m{"name": "b"}}}),
}, {
	name:    "lists of equal length compare element-wise, server defaults inside items are not drift",
	desired: spec(m{"ports": l{m{"port": int64(80)}, m{"port": int64(443)}}}),
	live:    spec(m{"ports": l{m{"port": int64(80), "protocol": "TCP"}, m{"port": int64(443), "protocol": "TCP"}}}),
}, {
	name:    "an element-wise difference has the index in its path",
	desired: spec(m{"x": l{m{"name": "a"}, m{"name": "b"}}}),
	live:    spec(m{"x": l{m{"name": "z", "d": int64(1)}, m{"name": "b"}}}),
	want:    []Change{{Path: "/spec/x/0/name", Op: OpReplace, Before: "z", After: "a"}},
}, {
	name:    "lists of different length are replaced whole",
	desired: spec(m{"x": l{"a", "b"}}),
	live:    spec(m{"x": l{"a"}}),
	want:    []Change{{Path: "/spec/x", Op: OpReplace, Before: l{"a"}, After: l{"a", "b"}}},
}, {
	name: "numbers compare by value across int64, int, float64 and json.Number",
	desired: spec(m{"a": int64(1), "b": 2, "c": json.Number("3"), "d": float64(4),
		"e": json.Number("1.5"), "f": int64(9007199254740993)}),
	live: spec(m{"a": float64(1), "b": int64(2), "c": float64(3), "d": json.Number("4.0"),
		"e": float64(1.5), "f": json.Number("9007199254740993")}),
}, {
	name:    "numbers of different value drift",
	desired: spec(m{"a": int64(2), "b": json.Number("9007199254740993")}),
	live:    spec(m{"a": float64(2.5), "b": int64(9007199254740992)}),
	want: []Change{
		{Path: "/spec/a", Op: OpReplace, Before: float64(2.5), After: int64(2)},
		{Path: "/spec/b", Op: OpReplace, Before: int64(9007199254740992), After: json.Number("9007199254740993")},
	},
}, {
	name:    "a number is not equal to the string of it",
	desired: spec(m{"a": "1"}),
	live:    spec(m{"a": int64(1)}),
	want:    []Change{{Path: "/spec/a", Op: OpReplace, Before: int64(1), After: "1"}},
}, {
	name:    "type mismatches are replaced",
	desired: spec(m{"map": m{"k": "v"}, "scalar": "s", "list": l{"a"}}),
	live:    spec(m{"map": "v", "scalar": m{"k": "s"}, "list": m{"0": "a"}}),
	want: []Change{
		{Path: "/spec/list", Op: OpReplace, Before: m{"0": "a"}, After: l{"a"}},
		{Path: "/spec/map", Op: OpReplace, Before: "v", After: m{"k": "v"}},
		{Path: "/spec/scalar", Op: OpReplace, Before: m{"k": "s"}, After: "s"},
	},
}, {
	name:    "an explicit null in desired is not set and is skipped",
	desired: spec(m{"a": nil, "b": m{"c": nil}}),
	live:    spec(m{"a": "live", "b": m{"c": "live"}}),
}, {
	name:    "nulls are dropped from the value of an added subtree",
	desired: spec(m{"a": m{"b": int64(1), "c": nil}}),
	live:    spec(m{}),
	want:    []Change{{Path: "/spec/a", Op: OpAdd, After: m{"b": int64(1)}}},
}, {
	name:    "a null live value is absent",
	desired: spec(m{"a": "x"}),
	live:    spec(m{"a": nil}),
	want:    []Change{{Path: "/spec/a", Op: OpAdd, After: "x"}},
}, {
	name:    "a null list element is a value",
	desired: spec(m{"a": l{nil, "x"}}),
	live:    spec(m{"a": l{"y", "x"}}),
	want:    []Change{{Path: "/spec/a/0", Op: OpReplace, Before: "y", After: nil}},
}, {
	name:     "an absent desired root compares nothing, not even removals",
	desired:  m{"kind": "T"},
	live:     spec(m{"a": "x"}),
	previous: spec(m{"a": "x"}),
}, {
	name:    "a nil live object is empty: desired roots are added",
	desired: spec(m{"a": "x"}),
	live:    nil,
	want:    []Change{{Path: "/spec", Op: OpAdd, After: m{"a": "x"}}},
}, {
	name:    "an absent live root is added whole",
	desired: spec(m{"a": "x"}),
	live:    m{"kind": "T"},
	want:    []Change{{Path: "/spec", Op: OpAdd, After: m{"a": "x"}}},
}, {
	name:     "ignore paths are removed from desired, live and previous",
	desired:  spec(m{"a": "x", "b": "new"}),
	live:     spec(m{"a": "y", "b": "old", "c": "z"}),
	previous: spec(m{"c": "z"}),
	ignore:   []string{"/spec/a", "/spec/c"},
	want:     []Change{{Path: "/spec/b", Op: OpReplace, Before: "old", After: "new"}},
}, {
	name:    "an ignore path that does not resolve or is malformed is skipped",
	desired: spec(m{"a": "x"}),
	live:    spec(m{"a": "y"}),
	ignore:  []string{"/spec/nope/deeper", "/spec/a/0", "spec/a", "/spec/~2", "/spec/list/7"},
	want:    []Change{{Path: "/spec/a", Op: OpReplace, Before: "y", After: "x"}},
}, {
	name:    "an empty ignore path is the whole object",
	desired: spec(m{"a": "x"}),
	live:    spec(m{"a": "y"}),
	ignore:  []string{""},
}, {
	name:    "ignore paths support list indices and keep later indices in place",
	desired: spec(m{"x": l{m{"n": "a"}, m{"n": "b"}}}),
	live:    spec(m{"x": l{m{"n": "z"}, m{"n": "c"}}}),
	ignore:  []string{"/spec/x/0"},
	want:    []Change{{Path: "/spec/x/1/n", Op: OpReplace, Before: "c", After: "b"}},
}, {
	name:    "ignore paths support negative list indices and fields inside items",
	desired: spec(m{"x": l{m{"n": "a", "t": int64(1)}, m{"n": "b"}}}),
	live:    spec(m{"x": l{m{"n": "a", "t": int64(2)}, m{"n": "c"}}}),
	ignore:  []string{"/spec/x/-1", "/spec/x/0/t"},
}, {
	name:    "an ignored list element keeps its manifest value when the list is replaced",
	desired: spec(m{"x": l{"keep", "b"}}),
	live:    spec(m{"x": l{"live"}}),
	ignore:  []string{"/spec/x/0"},
	want:    []Change{{Path: "/spec/x", Op: OpReplace, Before: l{"live"}, After: l{"keep", "b"}}},
}, {
	name:    "ignore paths escape ~ and /",
	desired: spec(m{"a/b": "x", "c~d": "x"}),
	live:    spec(m{"a/b": "y", "c~d": "y"}),
	ignore:  []string{"/spec/a~1b"},
	want:    []Change{{Path: "/spec/c~0d", Op: OpReplace, Before: "y", After: "x"}},
}, {
	name:    "changes are sorted by path",
	desired: spec(m{"z": "1", "a": "1", "m": m{"b": "1", "a": "1"}}),
	live:    spec(m{"z": "2", "a": "2", "m": m{"b": "2", "a": "2"}}),
	want: []Change{
		{Path: "/spec/a", Op: OpReplace, Before: "2", After: "1"},
		{Path: "/spec/m/a", Op: OpReplace, Before: "2", After: "1"},
		{Path: "/spec/m/b", Op: OpReplace, Before: "2", After: "1"},
		{Path: "/spec/z", Op: OpReplace, Before: "2", After: "1"},
	},
}, {
	name:    "booleans and strings compare by value",
	desired: spec(m{"b": true, "s": "x"}),
	live:    spec(m{"b": false, "s": "x"}),
	want:    []Change{{Path: "/spec/b", Op: OpReplace, Before: false, After: true}},
}}

func TestObject(t *testing.T) {
	for _, tc := range objectCases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			got := Object(obj(tc.desired), obj(tc.live), tc.options())
			g.Expect(got).To(Equal(tc.want))
		})
	}
}

func (tc objectCase) options() Options {
	return Options{Previous: obj(tc.previous), IgnorePaths: tc.ignore, Roots: tc.roots}
}

// TestApplyConverges is the property that ties Object, Patch and Apply
// together: applying the changes Object reports yields an object with no drift.
func TestApplyConverges(t *testing.T) {
	for _, tc := range objectCases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			changes := Object(obj(tc.desired), obj(tc.live), tc.options())
			healed, err := Apply(obj(tc.live), changes)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(Object(obj(tc.desired), healed, tc.options())).To(BeEmpty())
		})
	}
}

func TestObjectDoesNotMutateInputs(t *testing.T) {
	g := NewWithT(t)
	desired := obj(spec(m{"a": m{"b": "x", "c": "y"}, "l": l{"p", "q"}, "gone": nil}))
	live := obj(spec(m{"a": m{"b": "z", "c": "w"}, "l": l{"r", "q"}, "old": "o"}))
	previous := obj(spec(m{"old": "o", "l": l{"p", "q"}}))
	want := []*unstructured.Unstructured{desired.DeepCopy(), live.DeepCopy(), previous.DeepCopy()}

	changes := Object(desired, live, Options{Previous: previous, IgnorePaths: []string{"/spec/a/b", "/spec/l/0", "/spec/gone"}})

	g.Expect(changes).To(Equal([]Change{
		{Path: "/spec/a/c", Op: OpReplace, Before: "w", After: "y"},
		{Path: "/spec/old", Op: OpRemove, Before: "o"},
	}))
	g.Expect([]*unstructured.Unstructured{desired, live, previous}).To(Equal(want))
	healed, err := Apply(live, changes)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(healed.Object).NotTo(Equal(live.Object))
	g.Expect(live).To(Equal(want[1]))
}

func TestObjectIsDeterministic(t *testing.T) {
	g := NewWithT(t)
	desired := obj(spec(m{"a": "1", "b": "1", "c": "1", "d": m{"e": "1", "f": "1"}}))
	live := obj(spec(m{"a": "2", "b": "2", "c": "2", "d": m{"e": "2", "f": "2"}, "g": "x", "h": "y"}))
	previous := obj(spec(m{"g": "x", "h": "y"}))
	first := Object(desired, live, Options{Previous: previous})
	g.Expect(first).To(HaveLen(7))
	for range 50 {
		g.Expect(Object(desired, live, Options{Previous: previous})).To(Equal(first))
	}
}

func TestObjectNilDesired(t *testing.T) {
	g := NewWithT(t)
	g.Expect(Object(nil, obj(spec(m{"a": "x"})), Options{})).To(BeEmpty())
}

func TestDefaultRootsIsACopy(t *testing.T) {
	g := NewWithT(t)
	DefaultRoots()[0] = "metadata"
	g.Expect(DefaultRoots()).To(Equal([]string{"spec"}))
}
