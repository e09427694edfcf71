// Package apply is the only code that talks to the target cluster. It
// gathers what the pure planners need (live objects, owners, server
// dry-runs) and carries out their decisions (Act) with crash-safe,
// optimistic writes. It decides nothing: internal/plan does, and
// internal/pipeline runs the stages in order.
//
// Write order makes every strategy crash-safe and idempotent: a replacement
// is created before any reference to it is written, references are written
// before the original is marked superseded, and a recreate deletes with
// preconditions before it creates the same name again; a pass that finds the
// template missing creates it from the manifest. Names are deterministic, so
// a pass that restarts after any single write finds what the previous one
// did and goes on from there. The first failed write stops the pass.
//
// Every write carries the object's resourceVersion (in the JSON patch, or
// as a delete precondition with the UID), so a concurrent change makes the
// write fail with 409 Conflict, reported as ErrConflict, and the controller
// starts over from a fresh read.
package apply
