package monitoring

import (
	"fmt"
	"strconv"
	"strings"
)

// tokenKind is the class of a PromQL token, as far as Parse needs.
type tokenKind int

const (
	tokIdent tokenKind = iota + 1
	tokString
	tokNumber
	tokLParen
	tokRParen
	tokLBrace
	tokRBrace
	tokComma
	tokOp
)

// token is one token; a string's text is unquoted.
type token struct {
	kind tokenKind
	text string
}

// tokenize splits expr into tokens. Range and subquery durations ([5m],
// [1h:1m]) are dropped, since they name nothing.
func tokenize(expr string) ([]token, error) { //nolint:gocognit // a lexer: a case per character class, reads best whole
	var out []token
	s := expr
	for len(s) > 0 {
		c := s[0]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			s = s[1:]
		case c == '#':
			// A comment runs to the end of the line.
			if i := strings.IndexByte(s, '\n'); i >= 0 {
				s = s[i:]
			} else {
				s = ""
			}
		case c == '[':
			i := strings.IndexByte(s, ']')
			if i < 0 {
				return nil, fmt.Errorf("failed to tokenize %q: unterminated [", expr)
			}
			s = s[i+1:]
		case c == '"' || c == '\'' || c == '`':
			v, rest, err := quoted(s)
			if err != nil {
				return nil, fmt.Errorf("failed to tokenize %q: %w", expr, err)
			}
			out, s = append(out, token{tokString, v}), rest
		case isIdentStart(c):
			i := 1
			for i < len(s) && isIdentPart(s[i]) {
				i++
			}
			out, s = append(out, token{tokIdent, s[:i]}), s[i:]
		case c >= '0' && c <= '9' || c == '.':
			i := 1
			for i < len(s) && (isIdentPart(s[i]) || s[i] == '.' || ((s[i] == '+' || s[i] == '-') && (s[i-1] == 'e' || s[i-1] == 'E'))) {
				i++
			}
			out, s = append(out, token{tokNumber, s[:i]}), s[i:]
		default:
			if k, ok := punct[c]; ok {
				out, s = append(out, token{k, s[:1]}), s[1:]
				continue
			}
			i := 1
			for i < len(s) && strings.IndexByte("=!~<>", s[i]) >= 0 {
				i++
			}
			if strings.IndexByte("+-*/%^=!<>~", c) < 0 {
				return nil, fmt.Errorf("failed to tokenize %q: unexpected %q", expr, c)
			}
			out, s = append(out, token{tokOp, s[:i]}), s[i:]
		}
	}
	return out, nil
}

// punct are the one-character tokens.
var punct = map[byte]tokenKind{'(': tokLParen, ')': tokRParen, '{': tokLBrace, '}': tokRBrace, ',': tokComma}

// quoted unquotes the string literal at the start of s and returns it and
// the rest of s.
func quoted(s string) (string, string, error) {
	q := s[0]
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			if q != '`' {
				i++
			}
		case q:
			if q == '`' {
				return s[1:i], s[i+1:], nil
			}
			lit := s[:i+1]
			if q == '\'' {
				// strconv unquotes only double-quoted strings.
				lit = `"` + strings.ReplaceAll(strings.ReplaceAll(s[1:i], `\'`, `'`), `"`, `\"`) + `"`
			}
			v, err := strconv.Unquote(lit)
			if err != nil {
				return "", "", fmt.Errorf("bad string %s: %w", s[:i+1], err)
			}
			return v, s[i+1:], nil
		}
	}
	return "", "", fmt.Errorf("unterminated string %s", s)
}

func isIdentStart(c byte) bool {
	return c == '_' || c == ':' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isIdentPart(c byte) bool { return isIdentStart(c) || c >= '0' && c <= '9' }
