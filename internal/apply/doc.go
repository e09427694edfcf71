// Package apply is the only layer of the pipeline that talks to the target
// cluster. It gathers what the pure planners need (live objects, owners,
// server dry-runs), runs the planners in internal/plan, and carries out
// their decisions with crash-safe, optimistic writes.
//
// Write order makes every strategy crash-safe and idempotent: a replacement
// is created before any reference to it is written, references are written
// before the original is marked superseded, and a recreate deletes with
// preconditions before it creates the same name again; a pass that finds the
// template missing creates it from the manifest. Names are deterministic, so
// a pass that restarts after any single write finds what the previous one
// did and goes on from there. The first failed write stops the pass.
//
// Every write carries the object's resourceVersion (a JSON-patch test, an
// Update, or a delete precondition), so a concurrent change makes the pass
// fail with ErrConflict and the controller starts over from a fresh read.
package apply
