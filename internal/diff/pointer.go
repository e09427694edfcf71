package diff

import (
	"strconv"
	"strings"

	"github.com/go-openapi/jsonpointer"
)

// escapeToken escapes one RFC 6901 reference token: "~" becomes "~0" and "/"
// becomes "~1".
var escapeToken = jsonpointer.Escape

// unescapeToken reverses escapeToken. It reports false for a token that is not
// valid RFC 6901 (a "~" not followed by "0" or "1"), which jsonpointer.Unescape
// would pass through.
func unescapeToken(s string) (string, bool) {
	if !strings.Contains(s, "~") {
		return s, true // jsonpointer.Unescape would copy it
	}
	for i := 0; i < len(s); i++ {
		if s[i] == '~' && (i+1 == len(s) || (s[i+1] != '0' && s[i+1] != '1')) {
			return "", false
		}
	}
	return jsonpointer.Unescape(s), true
}

// joinPointer renders unescaped tokens as a JSON pointer.
func joinPointer(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(escapeToken(t))
	}
	return b.String()
}

// splitPointer parses a JSON pointer into unescaped tokens. "" is the whole
// document (no tokens). It reports false for a malformed pointer.
func splitPointer(p string) ([]string, bool) {
	if p == "" {
		return nil, true
	}
	if p[0] != '/' {
		return nil, false
	}
	parts := strings.Split(p[1:], "/")
	for i, part := range parts {
		t, ok := unescapeToken(part)
		if !ok {
			return nil, false
		}
		parts[i] = t
	}
	return parts, true
}

// arrayIndex resolves a pointer token against a list of length n the way
// evanphx/json-patch (used by jsondiff to drop ignored paths) does: a decimal
// index, negative indices counting from the end. "-" and out-of-range indices
// do not resolve.
func arrayIndex(token string, n int) (int, bool) {
	i, err := strconv.Atoi(token)
	if err != nil {
		return 0, false
	}
	if i < 0 {
		i += n
	}
	if i < 0 || i >= n {
		return 0, false
	}
	return i, true
}

// ignored marks a list element removed by an ignore pointer. Removing the
// element outright, as jsondiff does, would shift the indices of the elements
// after it, and the patch paths computed from the shifted list would then
// address the wrong elements of the real live list. The original value is kept
// so that a whole-list replacement can still write it back.
type ignored struct{ orig any }

// withoutPointer returns v with the value at tokens removed, copying only the
// maps and lists on the way (copy-on-write), so v itself is never modified.
// It returns v unchanged when the pointer does not resolve.
func withoutPointer(v any, tokens []string) any {
	if len(tokens) == 0 {
		return v
	}
	head, rest := tokens[0], tokens[1:]
	switch c := v.(type) {
	case map[string]any:
		child, ok := c[head]
		if !ok {
			return v
		}
		out := make(map[string]any, len(c))
		for k, cv := range c {
			out[k] = cv
		}
		if len(rest) == 0 {
			delete(out, head)
			return out
		}
		out[head] = withoutPointer(child, rest)
		return out
	case []any:
		i, ok := arrayIndex(head, len(c))
		if !ok {
			return v
		}
		if _, done := c[i].(ignored); done {
			return v
		}
		out := append([]any(nil), c...)
		if len(rest) == 0 {
			out[i] = ignored{orig: c[i]}
			return out
		}
		out[i] = withoutPointer(c[i], rest)
		return out
	}
	return v
}

// stripPaths removes every ignore pointer from obj (copy-on-write). It reports
// false when a pointer is the whole document (jsondiff.IgnorePathRoot), which
// means the object is excluded from comparison.
func stripPaths(obj map[string]any, pointers []string) (map[string]any, bool) {
	var out any = obj
	for _, p := range pointers {
		tokens, ok := splitPointer(p)
		if !ok {
			continue
		}
		if len(tokens) == 0 {
			return nil, false
		}
		out = withoutPointer(out, tokens)
	}
	m, _ := out.(map[string]any)
	return m, true
}

// Pointer renders unescaped tokens as an RFC 6901 JSON pointer, for callers
// that build patch paths of their own (reference rewrites, annotations).
func Pointer(tokens ...string) string { return joinPointer(tokens) }
