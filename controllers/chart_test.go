package controllers_test

import "github.com/templatedrift/template-drift-controller/internal/testenv"

// Short names for the shared fixture chart in internal/testenv.
type values = testenv.ChartValues

var (
	bootstrap = testenv.Bootstrap
	mgmt      = testenv.Management
	render    = testenv.RenderClusterChart
)
