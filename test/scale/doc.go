// Package scale measures the add-on on a fleet, as an operator would see it:
// one real kube-apiserver and etcd (internal/testenv, no Cluster API
// managers, whose CPU would drown the figures), N opted-in `cluster`
// HelmReleases stored as helm-controller stores them, and the controller
// binary run as a process under a user of its own. For comparison it runs
// helm-controller v1.6.4 the same way, on the same releases with
// driftDetection.mode warn, each controller on a control plane of its own.
//
// Everything is measured from outside the controller: requests from the API
// server's audit log filtered by the controller's user, CPU and memory from
// /proc, reconciles from its metrics endpoint, convergence and reaction
// times by polling the API server. `make bench` runs it (cmd/bench); the
// figures are recorded in docs/benchmarks.md.
//
// The package owns the configuration from BENCH_* variables (config.go),
// the controllers measured (target.go), the fleet (fleet.go; helm-controller's
// HelmCharts and status in helmfleet.go, its chart archive and server in
// chart.go), the requests counted from the audit log (audit.go; test/harness
// reads the log and /proc), the metrics reader (metrics.go), one run for one fleet size and
// controller (run.go, measure.go), the report (result.go) and the ratios
// between the two controllers (compare.go).
package scale
