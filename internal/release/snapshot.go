package release

import (
	"github.com/opencontainers/go-digest"
	helmv1 "helm.sh/helm/v4/pkg/release/v1"
)

// SnapshotDigest returns the digest helm-controller v1.6.4 records in
// status.history for rls (non-OCI source). Tests and the demo use it to write
// HelmRelease history exactly as helm-controller would.
func SnapshotDigest(rls *helmv1.Release) string {
	d, err := observe(rls).digestV164("")
	if err != nil {
		return ""
	}
	return d
}

// SnapshotDigestWith is SnapshotDigest for a helm-controller run with
// --snapshot-digest-algo=algo; "" for an algorithm this package does not
// compute (sha256, sha384 and sha512 it does).
func SnapshotDigestWith(rls *helmv1.Release, algo digest.Algorithm) string {
	o := observe(rls)
	o.Info.RollbackRevision = 0 // as digestV164
	d, err := o.digestWith(algo, "")
	if err != nil {
		return ""
	}
	return d
}
