package monitoring

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
)

// exposition is a text exposition with a gauge, a counter and a histogram.
const exposition = `# HELP g A gauge.
# TYPE g gauge
g{name="cluster",namespace="fleet",reason="Odd \"one\", really"} 1
g{name="other",namespace="fleet",extra="x"} 1
# TYPE c counter
c 3
# TYPE h histogram
h_bucket{kind="HelmRelease",le="0.01"} 0
h_bucket{kind="HelmRelease",le="+Inf"} 1
h_sum{kind="HelmRelease"} 0.5
h_count{kind="HelmRelease"} 1
`

func TestParseExposition(t *testing.T) {
	g := NewWithT(t)
	got, err := ParseExposition(strings.NewReader(exposition))
	g.Expect(err).NotTo(HaveOccurred())
	set := func(ls ...string) map[string]bool {
		out := map[string]bool{}
		for _, l := range ls {
			out[l] = true
		}
		return out
	}
	g.Expect(got).To(Equal(Exposed{
		"g": set("name", "namespace", "reason", "extra"), "c": set(),
		"h_bucket": set("kind", "le"), "h_sum": set("kind"), "h_count": set("kind"),
	}))
	_, err = ParseExposition(strings.NewReader(`g{name="unterminated} 1`))
	g.Expect(err).To(HaveOccurred())
}

func TestCheck(t *testing.T) {
	exposed, err := ParseExposition(strings.NewReader(exposition))
	if err != nil {
		t.Fatal(err)
	}
	all := func(string) bool { return true }
	cases := []struct {
		// name says what the case proves.
		name string
		// expr is the query.
		expr string
		// keep filters the metrics checked; nil checks all.
		keep func(string) bool
		// want are the problems found.
		want []string
	}{
		{name: "exposed metrics and labels", expr: `max by (exported_namespace, name) (g{namespace="flux-system", reason="x"}) / on (pod) c`},
		{name: "a histogram's series", expr: `histogram_quantile(0.9, sum by (le) (rate(h_bucket{kind="HelmRelease"}[5m]))) / h_count`},
		{name: "up is Prometheus' own", expr: `up{namespace="flux-system", pod=~"x-.+"} == 0`},
		{name: "a missing metric", expr: "gone_total", want: []string{"q: metric gone_total is not exposed"}},
		{name: "a missing metric that is not checked", expr: "gone_total", keep: func(m string) bool { return m != "gone_total" }},
		{name: "a missing label", expr: `g{status="False"}`, want: []string{"q: g has no label status"}},
		{name: "exported_namespace is the exposition's namespace", expr: `c{exported_namespace="fleet"}`, want: []string{"q: c has no label exported_namespace"}},
		{name: "a grouping label one selector lacks", expr: `sum by (name) (g) / sum by (name) (c)`, want: []string{"q: c has no label name to group by"}},
		{name: "le only on buckets", expr: `sum by (le) (h_sum)`, want: []string{"q: h_sum has no label le to group by"}},
		{name: "up has only target labels", expr: `up{reason="x"}`, want: []string{"q: up has no label reason"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			keep := tc.keep
			if keep == nil {
				keep = all
			}
			got, err := Check([]Query{{Source: "q", Expr: tc.expr}}, exposed, keep)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(ConsistOf(tc.want))
		})
	}
	_, err = Check([]Query{{Source: "q", Expr: "vector(1)"}}, exposed, all)
	NewWithT(t).Expect(err).To(MatchError(ContainSubstring("q: ")))
}
