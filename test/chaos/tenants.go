package chaos

import "context"

// createTenants adds the tenants scenario's hostile releases to the fleet.
func (r *run) createTenants(context.Context) error { return nil }

// tenants is the tenants scenario's fault.
func (r *run) tenants(context.Context) error { return nil }

// checkTenants checks the tenants scenario's own invariants.
func (r *run) checkTenants(context.Context) error { return nil }
