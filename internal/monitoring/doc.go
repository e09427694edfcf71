// Package monitoring reads the monitoring configuration the project ships
// (the PrometheusRule in config/prometheus and the Grafana dashboard in the
// chart) and extracts what their PromQL queries use: the metric names, the
// label matchers and the grouping labels. Tests check those against the
// metrics the controller registers and serves, and hack/promcheck hands the
// queries to promtool, so that a renamed metric or label, or a query that
// does not parse, fails before a user's alert goes silent.
package monitoring
