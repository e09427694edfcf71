// Package chaos injects faults into the add-on while it corrects a fleet, and
// checks, after the faults stop, its invariants from outside the
// controller: the API server's state and its audit log, never the
// controller's own word.
//
// Each scenario runs on a control plane of its own (internal/testenv, the
// providers' CRDs and no managers), with a mixed fleet (fleet.go: a third
// corrected in place, a third rotating a locked template, a third recreating
// an unused locked template under server-side apply), the controller binary
// run as a process under a user of its own, and an audit policy that logs the
// bodies of that user's writes (audit.go). The faults (faults.go) are: SIGKILL
// of the controller at random points, each just after some objects were
// drifted afresh (killdrift.go), restarts of kube-apiserver on the same
// etcd, the same restarts on etcd compacted every 2 s without a watch
// cache, so that every watch expires and every informer relists while
// objects are drifted afresh (compact.go), another writer setting templates and references back while
// corrections run, SIGKILL of the leader of two replicas with leader
// election (failover.go), a proxy on 127.0.0.1 that answers a seeded
// share of the controller's requests with 500 or 429 or stalls them
// (proxy.go), compared with a fault-free run through the same proxy
// (lossy.go), hostile tenants' releases under the multi-tenancy lockdown,
// with the controller running as the chart's lockdown role (tenants.go,
// lockdown.go, identity.go), and tenants rewriting their kubeconfig
// Secrets next to releases with large values while the controller's
// memory is sampled (memory.go, memlarge.go, memfault.go, memcheck.go).
//
// The invariants (invariants.go for the live state, audit.go for the writes):
// every release converges; no duplicate replacement and no reference to a
// missing template; nothing half-done (no template Terminating, no orphan
// replacement, no probe object, no manifest template missing); every update
// and patch carries a resourceVersion and every delete a UID and
// resourceVersion; no write outside the templates and consumers of opted-in
// releases, their replacements, the HelmRelease status and events. The
// failover and lossy scenarios also check that no change was stored twice
// (doublewrite.go), that the other replica took the Lease over, and that
// the lossy run's requests stay within twice the fault-free run's; race,
// kill and compact that the add-on neither looped nor lost an update
// (compact also that nothing was stored twice, and that the informers did
// relist); tenants that
// every hostile release got its reason and that no Secret request and no
// target read or write used the controller's own identity; memory that the
// peak RSS stayed under half the chart's default memory limit.
//
// The package reads the audit log and /proc through test/harness, and
// reuses test/scale for the releases and the controller's build and flags. `make chaos` runs it
// (cmd/chaos); the matrix is recorded in docs/reliability.md.
package chaos
