// Package harness holds what the fleet benchmark (test/scale) and the
// reliability matrix (test/chaos) both need to measure a controller from
// outside: the API server's audit log (the policy flags, and one reader of
// its events), the controller process's CPU, memory and sockets from /proc,
// durations from the environment, and the main function of their commands.
// The releases of a fleet are built by test/scale, on which test/chaos
// builds its mixed fleet.
package harness
