package diff

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Confirm splits raw changes (Object of the manifest against an object read
// from the server) into the ones the server would keep and the ones it makes
// itself. serverView is the server's answer to a dry-run of the manifest's
// object: what it would store, after defaulting, admission and the round
// trip through the storage version.
//
// A raw difference is only drift if the server, given the manifest's value,
// would store something other than what is live. Conversion between API
// versions changes values on the way back: durations are re-encoded ("5m"
// comes back "5m0s"), empty strings and lists and omitempty zeros (CAPM3's
// routes[].prefix: 0) are dropped. Those differences are the server's own,
// and correcting them would never end.
//
// A change is server-made when the value at its path in serverView equals the
// value at the same path in against, numbers by value and explicit nulls as
// absent; absent from both counts as equal. Only the change's own path is
// looked at, so serverView may carry a different name (a dry-run create runs
// under a probe name) or server-set metadata. Changes under metadata or
// status, which Object never reports, are always kept, as are all changes
// when serverView is nil (nothing to confirm with). Both results keep the
// order of changes; the inputs are never modified.
//
// against is the object the changes were computed on: the live template, or
// a rotated replacement read back from the server.
func Confirm(changes []Change, serverView, against *unstructured.Unstructured) (kept, serverMade []Change) {
	if serverView == nil {
		return changes, nil
	}
	view, obj := content(serverView), content(against)
	for _, ch := range changes {
		if madeByServer(ch.Path, view, obj) {
			serverMade = append(serverMade, ch)
		} else {
			kept = append(kept, ch)
		}
	}
	return kept, serverMade
}

// madeByServer reports whether view and obj hold the same value at path.
func madeByServer(path string, view, obj map[string]any) bool {
	tokens, ok := splitPointer(path)
	if !ok || len(tokens) == 0 || tokens[0] == "metadata" || tokens[0] == "status" {
		return false
	}
	vv, inView := valueAt(view, tokens)
	ov, inObj := valueAt(obj, tokens)
	if !inView || !inObj {
		return inView == inObj
	}
	return deepEqual(vv, ov)
}

// valueAt resolves unescaped pointer tokens in obj. A null value is absent,
// as the API server drops null members.
func valueAt(obj map[string]any, tokens []string) (any, bool) {
	var cur any = obj
	for _, t := range tokens {
		switch c := cur.(type) {
		case map[string]any:
			cur = c[t]
		case []any:
			i, ok := arrayIndex(t, len(c))
			if !ok {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
		if cur == nil {
			return nil, false
		}
	}
	return cur, true
}

// deepEqual compares two values read from the server: maps by their
// non-null members, lists element by element, leaves with scalarEqual (so
// an int64 equals the same float64).
func deepEqual(a, b any) bool {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		return ok && mapsEqual(av, bv)
	case []any:
		bv, ok := b.([]any)
		if !ok || len(av) != len(bv) {
			return false
		}
		for i := range av {
			if !deepEqual(av[i], bv[i]) {
				return false
			}
		}
		return true
	}
	if _, ok := b.(map[string]any); ok {
		return false
	}
	if _, ok := b.([]any); ok {
		return false
	}
	return scalarEqual(a, b)
}

func mapsEqual(a, b map[string]any) bool {
	if nonNull(a) != nonNull(b) {
		return false
	}
	for k, av := range a {
		if av == nil {
			continue
		}
		if bv := b[k]; bv == nil || !deepEqual(av, bv) {
			return false
		}
	}
	return true
}

func nonNull(m map[string]any) int {
	n := 0
	for _, v := range m {
		if v != nil {
			n++
		}
	}
	return n
}
