// Package chaos injects faults into the add-on while it corrects a fleet, and
// checks, after the faults stop, the invariants of issue 12 from outside the
// controller: the API server's state and its audit log, never the
// controller's own word.
//
// Each scenario runs on a control plane of its own (internal/testenv, the
// providers' CRDs and no managers), with a mixed fleet (fleet.go: a third
// corrected in place, a third rotating a locked template, a third recreating
// an unused locked template under server-side apply), the controller binary
// run as a process under a user of its own, and an audit policy that logs the
// bodies of that user's writes (audit.go). The faults (faults.go) are: SIGKILL
// of the controller at random points, restarts of kube-apiserver on the same
// etcd, and another writer setting templates and references back while
// corrections run.
//
// The invariants (invariants.go for the live state, audit.go for the writes):
// every release converges; no duplicate replacement and no reference to a
// missing template; nothing half-done (no template Terminating, no orphan
// replacement, no probe object, no manifest template missing); every update
// and patch carries a resourceVersion and every delete a UID and
// resourceVersion; no write outside the templates and consumers of opted-in
// releases, their replacements, the HelmRelease status and events.
//
// The package reuses test/scale for the audit log, the releases, the
// controller's build and flags, and /proc. `make chaos` runs it
// (cmd/chaos); the matrix is recorded in docs/reliability.md.
package chaos
