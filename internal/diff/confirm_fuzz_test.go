package diff

import (
	"bytes"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// roundTrip models what a conversion round trip (v1beta1 → v1beta2 storage →
// v1beta1) does to a value: map members that are null, "", [] or a numeric
// zero are dropped (Go's omitempty), and strings that parse as durations are
// re-encoded ("5m" → "5m0s"). List elements are kept, normalised.
func roundTrip(v any) any {
	switch c := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(c))
		for k, cv := range c {
			if !omitted(cv) {
				out[k] = roundTrip(cv)
			}
		}
		return out
	case []any:
		out := make([]any, len(c))
		for i, cv := range c {
			out[i] = roundTrip(cv)
		}
		return out
	case string:
		if d, err := time.ParseDuration(c); err == nil {
			return d.String()
		}
	}
	return v
}

// omitted reports whether omitempty drops v.
func omitted(v any) bool {
	switch c := v.(type) {
	case nil:
		return true
	case string:
		return c == ""
	case []any:
		return len(c) == 0
	}
	return isNumber(v) && numberEqual(v, int64(0))
}

// stored returns manifest as the server would store and return it, under
// name, with server-set metadata.
func stored(manifest *unstructured.Unstructured, name string) *unstructured.Unstructured {
	out := roundTrip(manifest.Object).(map[string]any)
	out["metadata"] = map[string]any{"name": name, "resourceVersion": "42", "uid": name + "-uid"}
	return &unstructured.Unstructured{Object: out}
}

// FuzzConfirm checks, for an arbitrary manifest spec whose live object
// differs from it only by the server's normalisation, that every raw change
// is recognised as the server's: Confirm keeps nothing when the server's
// answer (the same normalisation of the manifest, under a probe name) equals
// live, and that a real change next to them is kept. It also checks that
// Confirm never panics, never modifies its inputs,
// and splits the changes without losing or reordering any.
func FuzzConfirm(f *testing.F) {
	f.Add([]byte(`{"timeout":"5m","providerID":"","taints":[],"replicas":0,"image":{"url":"http://x/i"}}`))
	f.Add([]byte(`{"networkData":{"networks":{"ipv4":[{"id":"n","routes":[{"network":"0.0.0.0","prefix":0,"gateway":{"string":"10.0.0.1"}}]}]}}}`))
	f.Add([]byte(`{"a/b":{"~":"","x":"1h"},"l":[[],"",0,"90s",{"e":""}]}`))
	f.Add([]byte(`""`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`{"n":0.0,"d":"-0","m":{}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		manifest, ok := fuzzObject(raw)
		if !ok || manifest == nil {
			return
		}
		live := stored(manifest, "t")
		view := stored(manifest, "t-tdc-probe")
		changes := Object(manifest, live, Options{})
		before := [][]byte{mustJSON(t, manifest), mustJSON(t, live), mustJSON(t, view)}

		kept, made := Confirm(changes, view, live)

		if len(kept) != 0 {
			t.Fatalf("kept differences the server made: %s\nall: %s", Summary(kept, 0, 0), Summary(changes, 0, 0))
		}
		if Summary(made, 0, 0) != Summary(changes, 0, 0) {
			t.Fatalf("server-made changes are not the raw changes in order:\n%s\n%s", Summary(made, 0, 0), Summary(changes, 0, 0))
		}
		after := [][]byte{mustJSON(t, manifest), mustJSON(t, live), mustJSON(t, view)}
		for i := range before {
			if !bytes.Equal(before[i], after[i]) {
				t.Fatalf("input %d modified:\n%s\n%s", i, before[i], after[i])
			}
		}
		expectRealChangeKept(t, manifest)
	})
}

// expectRealChangeKept adds to manifest's spec a field whose live value no
// normalisation produces, and checks Confirm keeps that change while the
// server's answer still normalises the rest.
func expectRealChangeKept(t *testing.T, manifest *unstructured.Unstructured) {
	if _, ok := manifest.Object["spec"].(map[string]any); !ok {
		return
	}
	m := manifest.DeepCopy()
	m.Object["spec"].(map[string]any)["tdcReal"] = "wanted"
	live := stored(m, "t")
	live.Object["spec"].(map[string]any)["tdcReal"] = "drifted"
	view := stored(m, "t-tdc-probe")
	kept, _ := Confirm(Object(m, live, Options{}), view, live)
	if len(kept) != 1 || kept[0].Path != "/spec/tdcReal" {
		t.Fatalf("a real change must be kept, and only it: kept %s", Summary(kept, 0, 0))
	}
}
