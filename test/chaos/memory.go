package chaos

import "context"

// createMemoryFleet adds the memory scenario's releases to the fleet.
func (r *run) createMemoryFleet(context.Context) error { return nil }

// memory is the memory scenario's fault.
func (r *run) memory(context.Context) error { return nil }

// checkMemory checks the memory scenario's own invariants.
func (r *run) checkMemory(context.Context) error { return nil }
