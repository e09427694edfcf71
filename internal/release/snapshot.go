package release

import helmv1 "helm.sh/helm/v4/pkg/release/v1"

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
