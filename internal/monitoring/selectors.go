package monitoring

import (
	"fmt"
	"strings"
	"unicode"
)

// Use is what one PromQL expression reads.
type Use struct {
	// Selectors are its vector selectors, in order.
	Selectors []Selector
}

// Selector is one vector selector: a metric name, its label matchers, and
// the labels the expression groups or matches its series by.
type Selector struct {
	Metric   string
	Matchers []Matcher
	// Grouping are the labels of the by and without clauses of the
	// aggregations around the selector, and of the expression's on and
	// ignoring clauses (both sides of a match need them). group_left and
	// group_right labels come from one side only and are not recorded.
	Grouping []string
}

// Matcher is one label matcher of a selector.
type Matcher struct {
	// Label is the label name; Op is =, !=, =~ or !~; Value is unquoted.
	Label, Op, Value string
}

// groupingKeywords are followed by a parenthesised list of label names.
var groupingKeywords = map[string]bool{
	"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
}

// operatorKeywords are PromQL words that are neither metrics nor functions.
var operatorKeywords = map[string]bool{
	"and": true, "or": true, "unless": true, "bool": true, "offset": true, "inf": true, "nan": true,
}

// aggregators are PromQL's aggregation operators, which may be followed by
// a by or without clause before their parenthesis.
var aggregators = map[string]bool{
	"sum": true, "min": true, "max": true, "avg": true, "group": true, "stddev": true, "stdvar": true,
	"count": true, "count_values": true, "bottomk": true, "topk": true, "quantile": true,
	"limitk": true, "limit_ratio": true,
}

// unsupported are functions whose string arguments name labels: the
// extraction would miss those labels, so it refuses them rather than
// check less than the query uses.
var unsupported = map[string]bool{"label_replace": true, "label_join": true, "count_values": true}

// Parse extracts the selectors and grouping labels of a PromQL expression.
// It is a small tokenizer, not the PromQL parser (which would add the
// Prometheus module to this one's dependencies): it understands the
// expressions this project ships, refuses functions whose arguments name
// labels, and leaves syntax checks to promtool (hack/promcheck).
func Parse(expr string) (Use, error) { //nolint:gocognit // one pass over the tokens, a case per token kind, reads best whole
	toks, err := tokenize(expr)
	if err != nil {
		return Use{}, err
	}
	var sels []Selector
	var at []int // the token index of each selector
	var scopes []scope
	var matching []string
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if t.kind != tokIdent {
			if t.kind == tokLBrace {
				return Use{}, fmt.Errorf("failed to parse %q: a selector without a metric name", expr)
			}
			continue
		}
		next := kindAt(toks, i+1)
		switch {
		case groupingKeywords[t.text]:
			if next != tokLParen {
				continue // group_left without labels
			}
			labels, end, err := labelList(toks, i+2)
			if err != nil {
				return Use{}, fmt.Errorf("failed to parse %q: %w", expr, err)
			}
			if t.text == "on" || t.text == "ignoring" {
				matching = append(matching, labels...)
			}
			i = end
		case operatorKeywords[t.text]:
		case aggregators[t.text]:
			sc, err := aggregation(toks, i)
			if err != nil {
				return Use{}, fmt.Errorf("failed to parse %q: %w", expr, err)
			}
			scopes = append(scopes, sc)
		case next == tokLParen:
			if unsupported[t.text] {
				return Use{}, fmt.Errorf("failed to parse %q: %s names labels in strings, which this extraction does not read", expr, t.text)
			}
		default:
			s := Selector{Metric: t.text}
			at = append(at, i)
			if next == tokLBrace {
				ms, end, err := matchers(toks, i+2)
				if err != nil {
					return Use{}, fmt.Errorf("failed to parse %q: %w", expr, err)
				}
				s.Matchers, i = ms, end
			}
			sels = append(sels, s)
		}
	}
	if len(sels) == 0 {
		return Use{}, fmt.Errorf("failed to parse %q: no metric selected", expr)
	}
	for k := range sels {
		for _, sc := range scopes {
			if at[k] > sc.from && at[k] < sc.to {
				sels[k].Grouping = append(sels[k].Grouping, sc.labels...)
			}
		}
		sels[k].Grouping = append(sels[k].Grouping, matching...)
	}
	return Use{Selectors: sels}, nil
}

// scope is an aggregation's grouping labels and the token range of its
// argument.
type scope struct {
	labels   []string
	from, to int
}

// aggregation reads the aggregation whose operator is toks[i]: `op by (l)
// (arg)` or `op (arg) by (l)`, without instead of by, or no clause.
func aggregation(toks []token, i int) (scope, error) {
	var sc scope
	j := i + 1
	if kindAt(toks, j) == tokIdent && groupingKeywords[toks[j].text] {
		labels, end, err := labelList(toks, j+2)
		if err != nil {
			return scope{}, err
		}
		sc.labels, j = labels, end+1
	}
	if kindAt(toks, j) != tokLParen {
		return scope{}, fmt.Errorf("%s without its argument", toks[i].text)
	}
	end, err := closing(toks, j)
	if err != nil {
		return scope{}, err
	}
	sc.from, sc.to = j, end
	if kindAt(toks, end+1) == tokIdent && groupingKeywords[toks[end+1].text] && kindAt(toks, end+2) == tokLParen {
		labels, _, err := labelList(toks, end+3)
		if err != nil {
			return scope{}, err
		}
		sc.labels = append(sc.labels, labels...)
	}
	return sc, nil
}

// closing returns the index of the parenthesis that closes toks[open].
func closing(toks []token, open int) (int, error) {
	depth := 0
	for i := open; i < len(toks); i++ {
		switch toks[i].kind {
		case tokLParen:
			depth++
		case tokRParen:
			depth--
			if depth == 0 {
				return i, nil
			}
		}
	}
	return 0, fmt.Errorf("unbalanced parentheses")
}

// kindAt is the kind of toks[i], or 0 past the end.
func kindAt(toks []token, i int) tokenKind {
	if i < len(toks) {
		return toks[i].kind
	}
	return 0
}

// labelList reads `l1, l2)` from toks[i:] and returns the labels and the
// index of the closing parenthesis.
func labelList(toks []token, i int) ([]string, int, error) {
	var out []string
	for ; i < len(toks); i++ {
		switch toks[i].kind {
		case tokRParen:
			return out, i, nil
		case tokIdent:
			out = append(out, toks[i].text)
		case tokComma:
		default:
			return nil, 0, fmt.Errorf("unexpected %q in a label list", toks[i].text)
		}
	}
	return nil, 0, fmt.Errorf("unterminated label list")
}

// matchers reads `label op "value", ...}` from toks[i:] and returns the
// matchers and the index of the closing brace.
func matchers(toks []token, i int) ([]Matcher, int, error) {
	var out []Matcher
	for ; i < len(toks); i++ {
		switch toks[i].kind {
		case tokRBrace:
			return out, i, nil
		case tokComma:
		case tokIdent:
			if i+2 >= len(toks) || toks[i+1].kind != tokOp || toks[i+2].kind != tokString {
				return nil, 0, fmt.Errorf("malformed matcher at %q", toks[i].text)
			}
			op := toks[i+1].text
			if op != "=" && op != "!=" && op != "=~" && op != "!~" {
				return nil, 0, fmt.Errorf("unknown matcher operator %q", op)
			}
			out = append(out, Matcher{Label: toks[i].text, Op: op, Value: toks[i+2].text})
			i += 2
		default:
			return nil, 0, fmt.Errorf("unexpected %q in a selector", toks[i].text)
		}
	}
	return nil, 0, fmt.Errorf("unterminated selector")
}

// Alternatives returns the values a matcher names, to accept them or to
// reject them, when they are one word (= and !=) or a plain alternation of
// words (a|b|c for =~ and !~), and false for any other regular expression.
func (m Matcher) Alternatives() ([]string, bool) {
	if m.Op == "=" || m.Op == "!=" {
		return []string{m.Value}, true
	}
	parts := strings.Split(m.Value, "|")
	for _, p := range parts {
		if p == "" || strings.IndexFunc(p, func(r rune) bool {
			return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' && r != '-'
		}) >= 0 {
			return nil, false
		}
	}
	return parts, true
}
