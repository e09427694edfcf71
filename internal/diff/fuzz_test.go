package diff

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// fuzzObject decodes fuzzed JSON (any value) the way the API server would and
// puts it under spec, so the fuzzer spends its time inside the compared root.
// Empty input means "no object"; invalid JSON reports false.
func fuzzObject(raw []byte) (*unstructured.Unstructured, bool) {
	if len(raw) == 0 {
		return nil, true
	}
	var wrapped map[string]any
	doc := append(append([]byte(`{"kind":"T","spec":`), raw...), '}')
	if err := utiljson.Unmarshal(doc, &wrapped); err != nil {
		return nil, false
	}
	return &unstructured.Unstructured{Object: wrapped}, true
}

func mustJSON(t *testing.T, u *unstructured.Unstructured) []byte {
	t.Helper()
	if u == nil {
		return nil
	}
	raw, err := json.Marshal(u.Object)
	if err != nil {
		t.Fatalf("encoding input: %v", err)
	}
	return raw
}

// FuzzObject checks, for arbitrary desired, live and previous specs and an
// arbitrary ignore pointer, that Object never panics, never modifies its
// inputs, is deterministic and sorted, that its changes always render as a
// patch that applies to live, and the convergence property:
//
//	Object(desired, Apply(live, Object(desired, live, o)), o) is empty
//
// This holds for every input, nulls included: a null desired map member is
// "not set" on both passes and is dropped from the values written, and a null
// list element is an ordinary value written and compared as null. (Without
// that distinction the property would only hold for desired without nulls.)
func FuzzObject(f *testing.F) {
	f.Add([]byte(`{"a":1,"b":{"c":"x"}}`), []byte(`{"a":1.0,"b":{"c":"y","d":true}}`), []byte(``), "")
	f.Add([]byte(`{"l":[{"n":"a"},{"n":"b"}]}`), []byte(`{"l":[{"n":"z","p":80}]}`), []byte(`{"l":[{"n":"a"}],"old":1}`), "/spec/l/0")
	f.Add([]byte(`{"a":null,"b":[null,1],"c":{"d":null}}`), []byte(`{"a":1,"b":[2,1],"old":{"x":1}}`), []byte(`{"old":{"x":1}}`), "/spec/c")
	f.Add([]byte(`{"a/b":{"~":1}}`), []byte(`{"a/b":5}`), []byte(`null`), "/spec/a~1b/~0")
	f.Add([]byte(`[1,2,3]`), []byte(`{"0":1}`), []byte(`[1,2,3]`), "/spec/-1")
	f.Add([]byte(`{"template":{"spec":{"image":{"url":"http://192.168.100.2/i"}}}}`),
		[]byte(`{"nodeReuse":false,"template":{"spec":{"automatedCleaningMode":"metadata","image":{"url":"http://10.10.10.17/i"}}}}`),
		[]byte(`{"template":{"spec":{"image":{"url":"http://192.168.100.2/i","checksum":"c"}}}}`), "")
	f.Fuzz(func(t *testing.T, rawDesired, rawLive, rawPrevious []byte, ignore string) {
		desired, ok1 := fuzzObject(rawDesired)
		live, ok2 := fuzzObject(rawLive)
		previous, ok3 := fuzzObject(rawPrevious)
		if !ok1 || !ok2 || !ok3 {
			return // not JSON objects: nothing to compare
		}
		opts := Options{Previous: previous, IgnorePaths: []string{ignore}}
		before := [][]byte{mustJSON(t, desired), mustJSON(t, live), mustJSON(t, previous)}

		changes := Object(desired, live, opts)

		after := [][]byte{mustJSON(t, desired), mustJSON(t, live), mustJSON(t, previous)}
		for i := range before {
			if !bytes.Equal(before[i], after[i]) {
				t.Fatalf("input %d modified:\n%s\n%s", i, before[i], after[i])
			}
		}
		checkChanges(t, changes)
		if again := Object(desired, live, opts); len(again) != len(changes) || Summary(again, 0, 0) != Summary(changes, 0, 0) {
			t.Fatalf("not deterministic:\n%s\n%s", Summary(changes, 0, 0), Summary(again, 0, 0))
		}
		healed, err := Apply(live, changes)
		if err != nil {
			t.Fatalf("patch does not apply: %v\nchanges: %s", err, Summary(changes, 0, 0))
		}
		if rest := Object(desired, healed, opts); len(rest) != 0 {
			t.Fatalf("did not converge: %s\nfirst pass: %s", Summary(rest, 0, 0), Summary(changes, 0, 0))
		}
	})
}

// checkChanges asserts the shape of a result: sorted unique valid pointers,
// known ops and a patch that encodes.
func checkChanges(t *testing.T, changes []Change) {
	t.Helper()
	if !sort.SliceIsSorted(changes, func(i, j int) bool { return changes[i].Path < changes[j].Path }) {
		t.Fatalf("not sorted: %s", Summary(changes, 0, 0))
	}
	for i, ch := range changes {
		if _, ok := splitPointer(ch.Path); !ok || !strings.HasPrefix(ch.Path, "/spec") {
			t.Fatalf("bad path %q", ch.Path)
		}
		if i > 0 && changes[i-1].Path == ch.Path {
			t.Fatalf("duplicate path %q", ch.Path)
		}
	}
	raw, err := Patch(changes, "1")
	if err != nil || !json.Valid(raw) {
		t.Fatalf("patch: %v %s", err, raw)
	}
}

// FuzzPointer checks that escaping any key yields a token that round-trips,
// that no escaped token contains "/", and that pointers built from keys split
// back into the same keys.
func FuzzPointer(f *testing.F) {
	for _, seed := range []string{"", "a", "~", "/", "~0", "~1", "a/b~c", "~/~/", "01", "-", "ü/~"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, key string) {
		esc := escapeToken(key)
		if strings.Contains(esc, "/") {
			t.Fatalf("escaped %q contains /: %q", key, esc)
		}
		if got, ok := unescapeToken(esc); !ok || got != key {
			t.Fatalf("round trip %q → %q → %q (%v)", key, esc, got, ok)
		}
		tokens := []string{"spec", key, key + "~", "/" + key}
		if got, ok := splitPointer(joinPointer(tokens)); !ok || !equalStrings(got, tokens) {
			t.Fatalf("split(join(%q)) = %q (%v)", tokens, got, ok)
		}
		// A valid token (no "/") survives unescape then escape unchanged.
		if raw, ok := unescapeToken(key); ok && !strings.Contains(key, "/") && escapeToken(raw) != key {
			t.Fatalf("escape(unescape(%q)) = %q", key, escapeToken(raw))
		}
	})
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
