package monitoring

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"

	"sigs.k8s.io/yaml"
)

// Query is one PromQL expression the project ships.
type Query struct {
	// Source names where it is: "alert <name>", or "panel <title>" and
	// "variable <name>" of the dashboard.
	Source string
	// Expr is the expression, with the dashboard's variables replaced by
	// values Prometheus accepts (see Substitute).
	Expr string
}

// RuleGroup is a Prometheus rule group, as a rules file and a
// PrometheusRule's spec.groups hold it.
type RuleGroup struct {
	Name  string `json:"name"`
	Rules []Rule `json:"rules"`
}

// Rule is an alerting or recording rule.
type Rule struct {
	Alert       string            `json:"alert,omitempty"`
	Record      string            `json:"record,omitempty"`
	Expr        string            `json:"expr"`
	For         string            `json:"for,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// ReadPrometheusRule reads the rule groups of the PrometheusRule in path.
func ReadPrometheusRule(path string) ([]RuleGroup, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("failed to read PrometheusRule: %w", err)
	}
	// Strict: a misspelt field of a rule (expr, for, labels) fails here.
	var obj struct {
		APIVersion string         `json:"apiVersion"`
		Kind       string         `json:"kind"`
		Metadata   map[string]any `json:"metadata"`
		Spec       struct {
			Groups []RuleGroup `json:"groups"`
		} `json:"spec"`
	}
	if err := yaml.UnmarshalStrict(data, &obj); err != nil {
		return nil, fmt.Errorf("failed to parse PrometheusRule %s: %w", path, err)
	}
	if obj.Kind != "PrometheusRule" || len(obj.Spec.Groups) == 0 {
		return nil, fmt.Errorf("failed to parse PrometheusRule %s: no PrometheusRule with rule groups", path)
	}
	return obj.Spec.Groups, nil
}

// RuleQueries are the expressions of groups' rules.
func RuleQueries(groups []RuleGroup) []Query {
	var out []Query
	for _, g := range groups {
		for _, r := range g.Rules {
			src := "alert " + r.Alert
			if r.Alert == "" {
				src = "record " + r.Record
			}
			out = append(out, Query{Source: src, Expr: r.Expr})
		}
	}
	return out
}

// dashboard is the part of a Grafana dashboard that holds queries.
type dashboard struct {
	Panels     []panel `json:"panels"`
	Templating struct {
		List []struct {
			Name  string          `json:"name"`
			Type  string          `json:"type"`
			Query json.RawMessage `json:"query"`
		} `json:"list"`
	} `json:"templating"`
}

type panel struct {
	Title   string `json:"title"`
	Targets []struct {
		Expr string `json:"expr"`
	} `json:"targets"`
	// Panels are a collapsed row's.
	Panels []panel `json:"panels"`
}

// labelValues is Grafana's label_values(selector, label) variable query.
var labelValues = regexp.MustCompile(`^\s*label_values\((.*),\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\)\s*$`)

// ReadDashboard reads the queries of the Grafana dashboard JSON in path:
// every panel target, and every query variable, whose label_values(sel,
// label) becomes `count by (label) (sel)`, the same read in PromQL.
func ReadDashboard(path string) ([]Query, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("failed to read dashboard: %w", err)
	}
	var d dashboard
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, fmt.Errorf("failed to parse dashboard %s: %w", path, err)
	}
	var out []Query
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			for _, t := range p.Targets {
				out = append(out, Query{Source: "panel " + p.Title, Expr: Substitute(t.Expr)})
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		var q struct {
			Query string `json:"query"`
		}
		if err := json.Unmarshal(v.Query, &q); err != nil {
			return nil, fmt.Errorf("failed to parse dashboard variable %s: %w", v.Name, err)
		}
		m := labelValues.FindStringSubmatch(q.Query)
		if m == nil {
			return nil, fmt.Errorf("failed to parse dashboard variable %s: %q is not label_values(selector, label)", v.Name, q.Query)
		}
		out = append(out, Query{Source: "variable " + v.Name, Expr: Substitute(fmt.Sprintf("count by (%s) (%s)", m[2], m[1]))})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("failed to parse dashboard %s: no queries", path)
	}
	return out, nil
}

// grafanaVariable is a dashboard variable reference: $name or ${name}.
var grafanaVariable = regexp.MustCompile(`\$\{?([a-zA-Z_][a-zA-Z0-9_]*)\}?`)

// Substitute replaces Grafana's variables in expr: interval variables by
// 5m, every other variable (all of them used in label matchers) by .*, the
// value of "All".
func Substitute(expr string) string {
	return grafanaVariable.ReplaceAllStringFunc(expr, func(v string) string {
		name := strings.Trim(v, "${}")
		if strings.HasPrefix(name, "__") && strings.HasSuffix(name, "interval") {
			return "5m"
		}
		return ".*"
	})
}
