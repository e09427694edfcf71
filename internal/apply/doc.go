// Package apply is act: Run makes the steps plan.Script decided, in their
// order, with crash-safe, optimistic writes, and the server dry-runs gather
// asks before a write. The only writes to a target cluster are Run's. It
// decides nothing: internal/plan does, and internal/pipeline runs the
// stages in order. Each step keeps its precondition, read live just before
// it (the Cluster before a move block, the users before a delete).
//
// The steps' order makes every strategy crash-safe and idempotent: a replacement
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
