// Package chaos injects faults into the add-on while it corrects a fleet, and
// checks, after the faults stop, its invariants from outside the
// controller: the API server's state and its audit log, never the
// controller's own word.
//
// Each scenario is one spec function with an input of its own, read top to
// bottom: KillSpec(ctx, KillInput), RestartSpec, CompactSpec, RaceSpec,
// FailoverSpec, LossySpec, TenantsSpec, MemorySpec and SoakSpec, each in
// its file. Run (spec.go) is the table of which spec a name runs. A spec
// makes a world (world.go): a control plane of its own (internal/testenv,
// the providers' CRDs, and with Input.Managers the real Cluster API and
// Metal3 managers, managers.go) with an audit policy that logs the bodies
// of the controller's writes (audit.go), a mixed fleet (fleet.go: a third
// corrected in place, a third rotating a locked template, a third
// recreating an unused locked template under server-side apply), and the
// controller binary run as a process under a user of its own. worldOptions
// say how a scenario's world differs (API server flags, the lockdown,
// leader election, the fault-injecting proxy, what counts as converged).
// The spec then runs its fault, waits for convergence (world.converge) and
// checks every scenario's invariants (world.check, with the checks it
// adds) and its own.
//
// Every scenario's invariants (invariants.go for the live state, audit.go
// for the writes): every release converges; no duplicate replacement and
// no reference to a missing template; nothing half-done (no template
// Terminating, no orphan replacement, no probe object, no manifest template
// missing); every update and patch carries a resourceVersion and every
// delete a UID and resourceVersion; no write outside the templates and
// consumers of opted-in releases, their replacements, the HelmRelease
// status and events. The scenarios' own: failover and lossy, that no change
// was stored twice (doublewrite.go); failover, that the other replica took
// the Lease over; lossy, that its requests stay within twice the fault-free
// run's (proxy.go, lossy.go); kill, compact, race and soak, where another
// writer drifts objects, that the add-on neither looped nor lost an update
// (drifts.go), compact that the informers did relist, soak that every drift
// healed; tenants, that every hostile release got its reason and that no
// Secret request and no target read or write used the controller's own
// identity (identity.go); memory, that the peak RSS stayed under half the
// chart's default memory limit (memory.go, memlarge.go, memfault.go,
// memcheck.go); with the managers, that no claimed data template was
// deleted and no MachineSet made unannounced.
//
// The package reads the audit log and /proc through test/harness, and
// reuses test/scale for the releases and the controller's build and flags.
// `make chaos` runs it (cmd/chaos); the matrix is recorded in
// docs/reliability.md.
package chaos
