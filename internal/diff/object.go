package diff

import (
	"sort"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Object compares desired against live and returns the drifted fields, sorted
// by path so the result is deterministic (stable conditions, events and
// patches across reconciles).
//
// Only fields desired sets are compared; fields present only live are server
// defaults or belong to other managers and are not drift, except the fields
// Options.Previous set and desired no longer sets (OpRemove). Explicit nulls
// in desired mean "not set". Lists of equal length compare element by element,
// lists of different length are replaced whole. Numbers compare by value.
// A nil live object is treated as empty. The inputs are never modified.
func Object(desired, live *unstructured.Unstructured, opts Options) []Change {
	d, l, p, ok := prepare(desired, live, opts)
	if !ok {
		return nil
	}
	c := &comparer{}
	for _, root := range roots(opts.Roots) {
		dv := d[root]
		if dv == nil {
			continue
		}
		c.push(root)
		if lv := l[root]; lv == nil {
			c.emit(OpAdd, nil, dv)
		} else {
			c.compare(dv, lv, p[root])
		}
		c.pop()
	}
	sort.Slice(c.out, func(i, j int) bool { return c.out[i].Path < c.out[j].Path })
	return c.out
}

// prepare extracts the three top-level maps and removes the ignore pointers
// from them (copy-on-write). It reports false when the object is excluded.
func prepare(desired, live *unstructured.Unstructured, opts Options) (d, l, p map[string]any, ok bool) {
	d, l, p = content(desired), content(live), content(opts.Previous)
	if d == nil || len(opts.IgnorePaths) == 0 {
		return d, l, p, d != nil
	}
	if d, ok = stripPaths(d, opts.IgnorePaths); !ok {
		return nil, nil, nil, false
	}
	l, _ = stripPaths(l, opts.IgnorePaths)
	p, _ = stripPaths(p, opts.IgnorePaths)
	return d, l, p, true
}

func content(u *unstructured.Unstructured) map[string]any {
	if u == nil {
		return nil
	}
	return u.Object
}

// roots returns the de-duplicated roots to compare, without metadata and
// status.
func roots(requested []string) []string {
	if len(requested) == 0 {
		return DefaultRoots()
	}
	out := make([]string, 0, len(requested))
	seen := make(map[string]bool, len(requested))
	for _, r := range requested {
		if r == "metadata" || r == "status" || seen[r] {
			continue
		}
		seen[r] = true
		out = append(out, r)
	}
	return out
}

// comparer walks desired, live and previous in step. The path is kept as a
// stack of unescaped tokens and only rendered when a change is emitted, which
// keeps the common no-drift walk free of string building.
type comparer struct {
	tokens []string
	out    []Change
}

func (c *comparer) push(token string) { c.tokens = append(c.tokens, token) }
func (c *comparer) pop()              { c.tokens = c.tokens[:len(c.tokens)-1] }

func (c *comparer) emit(op Op, before, after any) {
	ch := Change{Path: joinPointer(c.tokens), Op: op, Before: liveValue(before)}
	if op != OpRemove {
		ch.After = desiredValue(after)
	}
	c.out = append(c.out, ch)
}

// compare compares desired value d with live value l (both present); p is the
// previous release's value at the same place, or nil.
func (c *comparer) compare(d, l, p any) {
	if isIgnored(d) || isIgnored(l) {
		return
	}
	switch dv := d.(type) {
	case map[string]any:
		lm, ok := l.(map[string]any)
		if !ok {
			c.emit(OpReplace, l, d)
			return
		}
		pm, _ := p.(map[string]any)
		c.compareMaps(dv, lm, pm)
	case []any:
		ls, ok := l.([]any)
		if !ok || len(ls) != len(dv) {
			c.emit(OpReplace, l, d)
			return
		}
		c.compareLists(dv, ls, p)
	default:
		if !scalarEqual(d, l) {
			c.emit(OpReplace, l, d)
		}
	}
}

func (c *comparer) compareMaps(d, l, p map[string]any) {
	for k, dv := range d {
		if dv == nil {
			continue // explicit null: not set
		}
		c.push(k)
		if lv := l[k]; lv == nil {
			c.emit(OpAdd, nil, dv)
		} else {
			c.compare(dv, lv, p[k])
		}
		c.pop()
	}
	for k, pv := range p {
		if pv == nil || isIgnored(pv) || d[k] != nil {
			continue
		}
		if lv := l[k]; lv != nil && !isIgnored(lv) {
			c.push(k)
			c.emit(OpRemove, lv, nil)
			c.pop()
		}
	}
}

// compareLists compares lists of equal length element by element, so fields
// the server defaulted inside items are not drift. The previous list only
// lines up with desired when it has the same length; otherwise its elements
// are not used.
func (c *comparer) compareLists(d, l []any, p any) {
	ps, _ := p.([]any)
	if len(ps) != len(d) {
		ps = nil
	}
	for i := range d {
		var pv any
		if ps != nil {
			pv = ps[i]
		}
		c.push(strconv.Itoa(i))
		c.compare(d[i], l[i], pv)
		c.pop()
	}
}

func isIgnored(v any) bool {
	_, ok := v.(ignored)
	return ok
}
