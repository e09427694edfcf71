// Package plan decides, and only decides. Every function here is pure: it
// takes plain data the gatherer (internal/pipeline, through internal/target)
// read from the API server and returns what to do, so each decision is
// tested without an API server, as cert-manager separates "should we act"
// from acting.
//
// It owns:
//   - parsing the add-on's annotations (Options);
//   - the ordered gates that decide whether a HelmRelease may be acted on at
//     all (Gate): mode, suspend, release state, paused Clusters;
//   - per template, the correction strategy (in-place, rotate, recreate) and
//     the deterministic name of a rotated replacement;
//   - the loop guard: the digest of a correction's changes (DriftDigest),
//     recorded on the template, and the failure when the same difference
//     comes back for the same release;
//   - building the replacement or recreated object, and the consumer
//     reference rewrites a rotation needs;
//   - whether a change to a MachineDeployment or a KubeadmControlPlane rolls
//     its Machines (Rollout), for a preview of a change.
//
// Decisions are recomputed from the live world on every pass (CAPI's
// reentrancy rule): nothing here trusts a previous condition.
package plan
