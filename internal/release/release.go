package release

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/opencontainers/go-digest"
	"helm.sh/helm/v4/pkg/release/common"
	helmv1 "helm.sh/helm/v4/pkg/release/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/templatedrift/template-drift-controller/internal/manifest"
)

// Release is the plain-data view of one stored Helm release the pipeline
// needs. It is detached from Helm's types so that callers neither depend on
// Helm's API nor hold the whole decoded chart in memory.
//
// Digest is the digest helm-controller records for a chart from a non-OCI
// source; for OCI sources helm-controller mixes the artifact digest in, which
// VerifySnapshot takes from the snapshot.
type Release struct {
	Name        string // release name
	Namespace   string // release (target) namespace
	Version     int
	Status      string // helm common.Status, e.g. "deployed", "failed", "pending-upgrade"
	ApplyMethod string // helm v4 apply_method: "csa", "ssa" or "" (releases written by Helm 3)
	// Manifest is the release's manifest as Helm stored it. A release
	// the Reader returns has it prepared instead (Prepared), unless it
	// does not parse: Objects then reports why, on every read.
	Manifest string
	// Prepared is Manifest's objects, split and checked once
	// (manifest.Prepare), so the passes that read the release again do not
	// parse its YAML again.
	Prepared manifest.Prepared
	// ManifestBytes is Manifest's length, kept with Prepared: the limit
	// Objects applies is the manifest's, not the prepared form's.
	ManifestBytes int
	Digest        string // helm-controller snapshot digest with its default algorithm ("sha256:<hex>"), computed exactly as helm-controller v1.6.4 does

	ChartName, ChartVersion string

	// digesters complete the digest of the release for the snapshot's OCI
	// digest, which helm-controller mixes in from the HelmRelease and the
	// release lacks, so VerifySnapshot can check it: one pair an algorithm
	// the Reader had met in status.history when it decoded the release,
	// sha256 first (see matchesDigest). Copies of the Release share them;
	// nobody changes them.
	digesters []digesterPair
}

// Ref returns "<namespace>/<name>.v<version>". It names one release version
// unambiguously in annotations, events and messages.
func (r *Release) Ref() string {
	return r.Namespace + "/" + r.Name + ".v" + strconv.Itoa(r.Version)
}

// Objects returns the release's objects as manifest.Split gives them, from
// Prepared when the release has it, otherwise by splitting Manifest; a
// manifest above maxBytes (0: no limit) fails with
// manifest.ErrManifestTooLarge either way.
func (r *Release) Objects(maxBytes int) ([]*unstructured.Unstructured, error) {
	if r.Prepared != "" {
		if err := manifest.CheckSize(r.ManifestBytes, maxBytes); err != nil {
			return nil, err
		}
		return r.Prepared.Objects()
	}
	return manifest.Split(r.Manifest, r.Namespace, maxBytes)
}

// IsPending reports whether Helm is still writing the release
// (pending-install, pending-upgrade or pending-rollback). Its manifest may not
// be what ends up applied, so the pipeline must not act on it.
func (r *Release) IsPending() bool {
	switch common.Status(r.Status) {
	case common.StatusPendingInstall, common.StatusPendingUpgrade, common.StatusPendingRollback:
		return true
	}
	return false
}

// SecretName returns the name of the Secret Helm stores version of release
// name in: "sh.helm.release.v1.<name>.v<version>".
func SecretName(name string, version int) string {
	return "sh.helm.release.v1." + name + ".v" + strconv.Itoa(version)
}

// fromHelm converts a release decoded by Helm's driver for the Secret of
// name and version, with digesters of each of algos (sha256 first). It
// fails with ErrReleaseCorrupt when the data cannot be the release the
// Secret is named after, and with ErrManifestTooLarge when the manifest
// exceeds maxManifestBytes (no limit when <= 0).
func fromHelm(rls *helmv1.Release, name string, version, maxManifestBytes int, algos []digest.Algorithm) (*Release, error) {
	if err := checkDecoded(rls, name, version); err != nil {
		return nil, fmt.Errorf("failed to accept release %s: %w: %w", SecretName(name, version), ErrReleaseCorrupt, err)
	}
	if maxManifestBytes > 0 && len(rls.Manifest) > maxManifestBytes {
		return nil, fmt.Errorf("failed to accept release %s: %w: %d bytes, limit %d",
			SecretName(name, version), ErrManifestTooLarge, len(rls.Manifest), maxManifestBytes)
	}
	digesters, err := newReleaseDigesters(observe(rls), algos)
	if err != nil {
		return nil, fmt.Errorf("failed to compute digest of release %s: %w: %w", SecretName(name, version), ErrReleaseCorrupt, err)
	}
	if len(digesters) == 0 || digesters[0].algo() != digest.SHA256 {
		return nil, fmt.Errorf("failed to compute digest of release %s: no sha256 digester", SecretName(name, version))
	}
	sha256Digest, err := digesters[0].v164.digest("")
	if err != nil {
		return nil, fmt.Errorf("failed to compute digest of release %s: %w: %w", SecretName(name, version), ErrReleaseCorrupt, err)
	}
	out := &Release{
		Name:        rls.Name,
		Namespace:   rls.Namespace,
		Version:     rls.Version,
		Status:      rls.Info.Status.String(),
		ApplyMethod: rls.ApplyMethod,
		Manifest:    rls.Manifest,
		Digest:      sha256Digest,
		digesters:   digesters,
	}
	if rls.Chart != nil && rls.Chart.Metadata != nil {
		out.ChartName = rls.Chart.Metadata.Name
		out.ChartVersion = rls.Chart.Metadata.Version
	}
	return out, nil
}

// checkDecoded rejects data that decoded as JSON but cannot be a release
// Helm wrote under this key: Helm always writes info, never a null hook, and
// derives the Secret name from the release's own name and version.
func checkDecoded(rls *helmv1.Release, name string, version int) error {
	switch {
	case rls == nil:
		return errors.New("no release")
	case rls.Info == nil:
		return errors.New("release has no info")
	case rls.Name != name:
		return fmt.Errorf("release name %q does not match its Secret", rls.Name)
	case rls.Version != version:
		return fmt.Errorf("release version %d does not match its Secret", rls.Version)
	}
	for _, h := range rls.Hooks {
		if h == nil {
			return errors.New("release has a null hook")
		}
	}
	return nil
}
