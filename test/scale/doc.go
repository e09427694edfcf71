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
// Each kind of measurement is one spec function with an input of its own,
// as the e2e suite's specs: AddonSpec (the add-on), LockdownSpec (the
// add-on under the multi-tenancy lockdown), HelmControllerSpec
// (helm-controller in warn mode) and FloorSpec (the add-on's write floor,
// after AddonSpec). A spec reads top to bottom as the small steps it is
// composed of, which every spec shares: start the control plane
// (controlplane.go), create the fleet (fleet.go; helm-controller's
// HelmCharts and status in helmfleet.go, its chart archive and server in
// chart.go), start the controller (processes.go), converge, the steady
// window and collect (measure.go); spec.go has the session that logs the
// steps and stops what they started.
//
// Around them: the configuration from the BENCH_* variables and the
// harness's fixed timing (config.go), the controllers' binaries and flags
// (target.go), the fleet shapes (fleets.go), the requests counted from the
// audit log (audit.go; test/harness reads the log and /proc), the metrics
// reader (metrics.go), the report and its table (result.go, table.go) and
// the ratios between the add-on and helm-controller (compare.go).
package scale
