package main

import (
	"fmt"

	"github.com/templatedrift/template-drift-controller/test/scale"
)

// steadyStateChecks are what each controller's steady state must meet, by
// BENCH_CONTROLLERS name: the command fails on any error of them. No
// timing is asserted.
var steadyStateChecks = map[string]func(scale.Result) []error{
	scale.TemplateDriftController: addonChecks,
	scale.Lockdown:                lockdownChecks,
	scale.HelmController:          helmControllerChecks,
}

// addonChecks: the add-on neither writes nor asks for discovery in a
// steady state.
func addonChecks(r scale.Result) []error {
	var errs []error
	if r.Writes > 0 {
		errs = append(errs, fmt.Errorf("with %d releases (fleet %s), the controller wrote %d times in the steady state (%v); want 0", r.N, r.Fleet, r.Writes, r.Requests.WritesByResource()))
	}
	if d := r.Requests.Discovery(); d > 0 {
		errs = append(errs, fmt.Errorf("with %d releases (fleet %s), the controller made %d discovery requests in the steady state; want 0", r.N, r.Fleet, d))
	}
	return errs
}

// lockdownChecks: the add-on's checks, and at most one request a pass.
// A pass under the lockdown lists its release's Secrets as the tenant, and
// reads the rest from the informers; its account's rules, reviewed at its
// first pass, are kept while no RBAC object changes. A request counts when
// it is made and a pass when it ends: the passes running at the window's
// end made theirs inside it.
func lockdownChecks(r scale.Result) []error {
	errs := addonChecks(r)
	if n := r.Requests.Total; float64(n) > r.Reconciles+inFlight {
		errs = append(errs, fmt.Errorf("with %d releases (fleet %s), the controller under the lockdown made %d requests in the steady state, over %.0f passes; want at most one a pass (%v)",
			r.N, r.Fleet, n, r.Reconciles, r.Requests.ByResource))
	}
	return errs
}

// inFlight is how many passes may be running at a window's end: the
// controller's default --concurrent, which the smoke runs with.
const inFlight = 4

// helmControllerChecks: helm-controller patches its status and records
// events on every pass; only an upgrade is a failure of the harness.
func helmControllerChecks(r scale.Result) []error {
	if r.Upgrades > 0 {
		return []error{fmt.Errorf("with %d releases, helm-controller upgraded %d times in the steady state; want 0", r.N, r.Upgrades)}
	}
	return nil
}
