package chaos

import (
	"encoding/json"
	"fmt"
	"slices"
)

// InvNoDoubleWrite is the failover and lossy scenarios' invariant: no
// change was stored twice. Two stored writes of the controller with the
// same verb to the same object (and subresource) with the same body, but
// for the resourceVersion it was made at, are the same change made twice:
// by a replica that took over and did again what the killed leader had
// done, or by a retry of a write that had gone through. Neither scenario
// has another writer that could undo a change in between.
const InvNoDoubleWrite = "no-double-write"

// changeOf is what w changes: its body with the resourceVersion it was
// made at left out (a JSON patch's operations on /metadata/resourceVersion,
// an object's metadata.resourceVersion), in canonical JSON.
func changeOf(w Write) string {
	var body any
	if json.Unmarshal(w.RequestObject, &body) != nil {
		return string(w.RequestObject)
	}
	switch b := body.(type) {
	case []any:
		body = slices.DeleteFunc(b, func(op any) bool {
			m, ok := op.(map[string]any)
			return ok && m["path"] == "/metadata/resourceVersion"
		})
	case map[string]any:
		if md, ok := b["metadata"].(map[string]any); ok {
			delete(md, "resourceVersion")
			if len(md) == 0 {
				delete(b, "metadata")
			}
		}
	}
	out, err := json.Marshal(body)
	if err != nil {
		return string(w.RequestObject)
	}
	return string(out)
}

// DoubleWrites returns a violation for each change the server stored more
// than once (refused writes, events and access reviews left out).
func DoubleWrites(writes []Write) []Violation {
	type key struct{ what, change string }
	counts := map[key]int{}
	var order []key
	for _, w := range writes {
		if !w.Succeeded() || exempt(w) {
			continue
		}
		k := key{what: w.target(), change: changeOf(w)}
		if counts[k] == 0 {
			order = append(order, k)
		}
		counts[k]++
	}
	var out []Violation
	for _, k := range order {
		if n := counts[k]; n > 1 {
			out = append(out, Violation{InvNoDoubleWrite, fmt.Sprintf("%s: the same change stored %d times: %s", k.what, n, abbreviate(k.change, 200))})
		}
	}
	return out
}

// abbreviate cuts s to n bytes, marking the cut.
func abbreviate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
