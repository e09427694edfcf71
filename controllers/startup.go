package controllers

import (
	"k8s.io/client-go/util/retry"

	"github.com/templatedrift/template-drift-controller/internal/plan"
)

// RetryStartup runs a step of the controller's start that reads the API
// server (building the manager runs a discovery), retrying a failure that
// may pass (plan.MayPass) with resolveBackoff, as ResolveWatchKinds does: the
// controller exits when its start fails, so one lost response among the
// discovery requests would stop it.
func RetryStartup(step func() error) error {
	return retry.OnError(resolveBackoff, plan.MayPass, step)
}
