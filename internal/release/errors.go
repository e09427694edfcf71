package release

import "errors"

var (
	// ErrReleaseNotFound means the release Secret does not exist (any more):
	// the release was uninstalled, or Helm pruned it from its history.
	// Callers usually wait for the next HelmRelease event rather than retry.
	ErrReleaseNotFound = errors.New("release not found")

	// ErrReleaseCorrupt means the release Secret exists but its data.release
	// cannot be decoded (bad base64, bad gzip, bad JSON) or does not describe
	// the release its Secret is named after. Retrying will not help until the
	// Secret changes, so callers should report it instead of requeueing fast.
	ErrReleaseCorrupt = errors.New("release data is corrupt")

	// ErrManifestTooLarge means the decoded manifest is larger than the
	// Reader's limit. The limit protects the controller's memory from a
	// release it was not sized for; callers should report it, not retry.
	ErrManifestTooLarge = errors.New("release manifest is too large")

	// ErrHistoryMismatch means the stored release is not the one recorded in
	// the HelmRelease's status.history, so it may not be the release Flux
	// manages (a manual helm upgrade, or a stale status). The pipeline must
	// not act on a release that fails this check.
	ErrHistoryMismatch = errors.New("release does not match HelmRelease history")

	// ErrUnverifiableDigest means the digest the HelmRelease's
	// status.history records for the release is malformed, or names an
	// algorithm this package does not compute (it computes sha256, sha384
	// and sha512; helm-controller's --snapshot-digest-algo also accepts
	// blake3 and sha1), so the release cannot be shown to be the one Flux
	// recorded. As for ErrHistoryMismatch, the pipeline must not act on
	// it; the message says what is wrong with the digest.
	ErrUnverifiableDigest = errors.New("status.history digest cannot be verified")
)
