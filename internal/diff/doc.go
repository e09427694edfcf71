// Package diff owns drift computation for the objects a Helm release renders:
// it compares the object in the stored release manifest ("desired") with the
// object in the cluster ("live"), reports the fields that drifted as a sorted
// list of Changes, and turns them into an RFC 6902 JSON patch (Patch), the
// object that patch produces (Apply) and a short human summary (Summary).
//
// The package is pure: it never talks to an API server. That is deliberate,
// and it is why it does not reuse fluxcd/pkg/ssa's jsondiff (the engine behind
// helm-controller's own drift detection), which diffs the live object against
// a server-side-apply dry run:
//
//   - A dry run needs an API server and patch permission on every object, even
//     to only report drift. Here every rule is a plain function of three maps,
//     unit- and fuzz-testable without a cluster.
//   - Only what the manifest sets is compared (Object). Fields that exist only
//     live - server defaults such as Metal3's nodeReuse, or fields owned by other
//     managers - are never drift, so correcting drift never fights the API
//     server's defaulting or another controller.
//   - The previous-release rule: a field that the previous deployed release set,
//     that the current one no longer sets, and that is still live, is reported
//     as a removal (Options.Previous), as Helm's three-way merge would remove
//     it. An SSA dry run only drops fields its own field manager owns, so there
//     the answer depends on managedFields history; here only on the manifests.
//   - Numbers compare by value (YAML 1 against a live 1.0) and explicit nulls in
//     the manifest mean "not set", as Kubernetes drops them.
//
// The raw diff is then confirmed with the server (Confirm): given the server's
// answer to a dry-run of the manifest's object, which internal/apply asks for
// and only where the raw diff found something, the changes whose path holds
// the same value in the answer as live are the server's own (API version
// conversion re-encodes durations and drops empty values) and are dropped.
// Confirm itself is as pure as Object.
//
// Ignore rules (HelmRelease spec.driftDetection.ignore) are not reimplemented:
// Ignorer compiles them with fluxcd/pkg/ssa/jsondiff's selector exactly as
// helm-controller does, so a rule selects the same objects here as there, and
// its JSON pointers are removed from every side before comparing, as jsondiff's
// IgnorePaths does. Two deliberate differences, both so that the patch never
// touches what the user ignored: an ignored list element is masked in place
// rather than deleted, so the indices in patch paths still address the real
// live list; and every rule is kept, where jsondiff.CompileIgnoreRules keeps
// only the last of several rules without target.
package diff
