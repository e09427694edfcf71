package release

import (
	"fmt"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
)

// VerifySnapshot checks that rel is the release helm-controller last recorded
// in the HelmRelease's status.history (pass history.Latest()): same name,
// namespace and version, and the same digest when the snapshot records one.
// The pipeline must only act on a release Flux itself produced; anything
// else (a manual helm upgrade, a stale status) returns an error wrapping
// ErrHistoryMismatch that says which field differs.
//
// As helm-controller's own verification does, the digest is computed with
// the algorithm it names (helm-controller's --snapshot-digest-algo: sha256,
// sha384 or sha512), and not compared for snapshots whose apiVersion is not
// helmv2.CurrentSnapshotAPIVersion: those were recorded by helm-controller
// < v1.5 over Helm 3 types, an encoding this package does not reproduce.
// The snapshot's OCI digest is mixed into the digest, as helm-controller
// does for charts from OCI sources. A digest that is malformed or names
// another algorithm returns an error wrapping ErrUnverifiableDigest that
// says why. A release Reader.GetFor returned has the digesters the
// snapshot's algorithm needs.
func VerifySnapshot(rel *Release, snap *helmv2.Snapshot) error {
	if rel == nil {
		return fmt.Errorf("failed to verify release against history: %w: no release", ErrHistoryMismatch)
	}
	if snap == nil {
		return fmt.Errorf("failed to verify release %s against history: %w: history has no snapshot",
			rel.Ref(), ErrHistoryMismatch)
	}
	var diff string
	switch {
	case rel.Name != snap.Name:
		diff = fmt.Sprintf("name differs (release %q, snapshot %q)", rel.Name, snap.Name)
	case rel.Namespace != snap.Namespace:
		diff = fmt.Sprintf("namespace differs (release %q, snapshot %q)", rel.Namespace, snap.Namespace)
	case rel.Version != snap.Version:
		diff = fmt.Sprintf("version differs (release %d, snapshot %d)", rel.Version, snap.Version)
	case checkedDigest(snap) == "":
		return nil
	default:
		return verifyDigest(rel, snap)
	}
	return fmt.Errorf("failed to verify release %s against history: %w: %s", rel.Ref(), ErrHistoryMismatch, diff)
}

// verifyDigest checks the digest snap records against rel, with the
// algorithm it names.
func verifyDigest(rel *Release, snap *helmv2.Snapshot) error {
	want, err := parseDigest(snap.Digest)
	if err != nil {
		return fmt.Errorf("failed to verify release %s against history: %w", rel.Ref(), err)
	}
	ok, err := rel.matchesDigest(want, snap.OCIDigest)
	switch {
	case err != nil:
		return fmt.Errorf("failed to verify release %s against history: %w", rel.Ref(), err)
	case !ok:
		return fmt.Errorf("failed to verify release %s against history: %w: digest differs: the stored release is not the one helm-controller recorded",
			rel.Ref(), ErrHistoryMismatch)
	}
	return nil
}
