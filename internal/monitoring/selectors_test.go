package monitoring

import (
	"testing"

	. "github.com/onsi/gomega"
)

func TestParse(t *testing.T) {
	cases := []struct {
		// name says what the case proves.
		name string
		// expr is the PromQL expression.
		expr string
		// want is the extraction; wantErr a substring of the error.
		want    Use
		wantErr string
	}{{
		name: "a bare metric",
		expr: "up",
		want: Use{Selectors: []Selector{{Metric: "up"}}},
	}, {
		name: "matchers of every operator, escapes and regular expressions kept as written",
		expr: `m{a="x", b!="y\"z", c=~"P|Q", d!~'.+'}`,
		want: Use{Selectors: []Selector{{Metric: "m", Matchers: []Matcher{
			{Label: "a", Op: "=", Value: "x"}, {Label: "b", Op: "!=", Value: `y"z`},
			{Label: "c", Op: "=~", Value: "P|Q"}, {Label: "d", Op: "!~", Value: ".+"},
		}}}},
	}, {
		name: "aggregations with by before and after their argument, a range and a function: each groups its own",
		expr: "max by (exported_namespace, name) (rate(a_total[5m])) + sum(b) without (pod) + c",
		want: Use{Selectors: []Selector{{Metric: "a_total", Grouping: []string{"exported_namespace", "name"}},
			{Metric: "b", Grouping: []string{"pod"}}, {Metric: "c"}}},
	}, {
		name: "nested aggregations add up",
		expr: "topk(10, sum by (name) (x) / count by (name) (y))",
		want: Use{Selectors: []Selector{{Metric: "x", Grouping: []string{"name"}}, {Metric: "y", Grouping: []string{"name"}}}},
	}, {
		name:    "a variable left in",
		expr:    `a > $threshold`,
		wantErr: "unexpected",
	}, {
		name: "a histogram quantile and numbers, variables substituted",
		expr: Substitute(`histogram_quantile(0.99, sum by (le) (rate(d_bucket{kind="HelmRelease", ns=~"$namespace"}[$__rate_interval]))) > 1e3`),
		want: Use{Selectors: []Selector{{Metric: "d_bucket", Matchers: []Matcher{{Label: "kind", Op: "=", Value: "HelmRelease"}, {Label: "ns", Op: "=~", Value: ".*"}},
			Grouping: []string{"le"}}}},
	}, {
		name: "binary operators, absent, vector matching and offset",
		expr: "a == 0 or absent(a{x=\"1\"} == 1) and on (pod) group_left (node) b offset 5m unless c bool > 1",
		want: Use{Selectors: []Selector{{Metric: "a", Grouping: []string{"pod"}},
			{Metric: "a", Matchers: []Matcher{{Label: "x", Op: "=", Value: "1"}}, Grouping: []string{"pod"}},
			{Metric: "b", Grouping: []string{"pod"}}, {Metric: "c", Grouping: []string{"pod"}}}},
	}, {
		name: "topk and a fallback vector",
		expr: "topk(10, count by (reason) (i)) or vector(0)",
		want: Use{Selectors: []Selector{{Metric: "i", Grouping: []string{"reason"}}}},
	}, {
		name:    "label_replace names labels in strings: refused",
		expr:    `label_replace(a, "dst", "$1", "src", "(.*)")`,
		wantErr: "label_replace",
	}, {
		name:    "a selector without a metric name: refused",
		expr:    `{__name__="a"}`,
		wantErr: "without a metric name",
	}, {
		name:    "no metric at all",
		expr:    "vector(1)",
		wantErr: "no metric selected",
	}, {
		name:    "an aggregation without its argument",
		expr:    "sum by (a) b",
		wantErr: "without its argument",
	}, {
		name:    "an unterminated selector",
		expr:    `a{b="c"`,
		wantErr: "unterminated",
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			got, err := Parse(tc.expr)
			if tc.wantErr != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tc.wantErr)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(Equal(tc.want))
		})
	}
}

func TestAlternatives(t *testing.T) {
	cases := []struct {
		// m is the matcher; want its values, ok whether they are known.
		m    Matcher
		want []string
		ok   bool
	}{
		{m: Matcher{Label: "r", Op: "=", Value: "A"}, want: []string{"A"}, ok: true},
		{m: Matcher{Label: "r", Op: "=~", Value: "A|B-c|d_e"}, want: []string{"A", "B-c", "d_e"}, ok: true},
		{m: Matcher{Label: "r", Op: "=~", Value: "x-.+"}},
		{m: Matcher{Label: "r", Op: "=~", Value: "A|"}},
		{m: Matcher{Label: "r", Op: "!=", Value: "True"}, want: []string{"True"}, ok: true},
		{m: Matcher{Label: "r", Op: "!~", Value: "A|B"}, want: []string{"A", "B"}, ok: true},
	}
	for _, tc := range cases {
		g := NewWithT(t)
		got, ok := tc.m.Alternatives()
		g.Expect(ok).To(Equal(tc.ok), "%+v", tc.m)
		g.Expect(got).To(Equal(tc.want), "%+v", tc.m)
	}
}
