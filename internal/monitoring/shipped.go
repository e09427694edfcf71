package monitoring

import "path/filepath"

// The shipped files, relative to the repository root.
const (
	// RulesFile is the PrometheusRule, the chart's rendered with its
	// default values.
	RulesFile = "config/prometheus/prometheusrule.yaml"
	// DashboardFile is the Grafana dashboard the chart and config/grafana
	// ship.
	DashboardFile = "charts/template-drift-controller/dashboards/template-drift-controller.json"
)

// Shipped reads the rule groups and every query, the rules' and the
// dashboard's, of the repository at root.
func Shipped(root string) ([]RuleGroup, []Query, error) {
	groups, err := ReadPrometheusRule(filepath.Join(root, RulesFile))
	if err != nil {
		return nil, nil, err
	}
	panels, err := ReadDashboard(filepath.Join(root, DashboardFile))
	if err != nil {
		return nil, nil, err
	}
	return groups, append(RuleQueries(groups), panels...), nil
}
