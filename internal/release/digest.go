package release

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"

	chart "helm.sh/helm/v4/pkg/chart/v2"
	helmv1 "helm.sh/helm/v4/pkg/release/v1"
)

// observation reproduces helm-controller v1.6.4's release.Observation
// (internal/release/observation.go): same fields, same order, same JSON tags.
// helm-controller's snapshot digest is sha256 over its JSON encoding, so any
// difference here changes every digest.
type observation struct {
	Name          string         `json:"name"`
	Version       int            `json:"version"`
	Info          helmv1.Info    `json:"info"`
	Action        string         `json:"-"` // helm-controller tracks the action for display only
	ChartMetadata chart.Metadata `json:"chartMetadata"`
	Config        map[string]any `json:"config"`
	Manifest      string         `json:"manifest"`
	Hooks         []helmv1.Hook  `json:"hooks"`
	Namespace     string         `json:"namespace"`
	OCIDigest     string         `json:"ociDigest,omitempty"`
}

// observe mirrors helm-controller's ObserveRelease with its default filter
// (IgnoreHookTestEvents): chart metadata only, nil config and hooks when
// empty, and no hook that fires on "test", so running tests does not change
// the digest. It shares rls's maps and strings: neither side may mutate them.
func observe(rls *helmv1.Release) observation {
	obs := observation{
		Name:      rls.Name,
		Version:   rls.Version,
		Manifest:  rls.Manifest,
		Namespace: rls.Namespace,
	}
	if rls.Info != nil {
		obs.Info = *rls.Info
	}
	if rls.Chart != nil && rls.Chart.Metadata != nil {
		obs.ChartMetadata = *rls.Chart.Metadata
	}
	if len(rls.Config) > 0 {
		obs.Config = rls.Config
	}
	for _, h := range rls.Hooks {
		if h != nil && !slices.Contains(h.Events, helmv1.HookTest) {
			obs.Hooks = append(obs.Hooks, *h)
		}
	}
	return obs
}

// digestV164 returns the digest helm-controller v1.6.4 records for this
// observation when the HelmRelease's artifact has OCI digest oci ("" for
// non-OCI sources).
//
// helm-controller v1.6.4 is built with Helm v4.2.4, whose release Info has no
// rollback_revision (added in Helm v4.3). It never sees that field, so it is
// cleared here to encode exactly what v1.6.4 encodes.
func (o observation) digestV164(oci string) (string, error) {
	o.Info.RollbackRevision = 0
	return o.digest(oci)
}

// digest encodes o with OCIDigest oci the way helm-controller does:
// json.NewEncoder (HTML escaping on, trailing newline) into sha256.
func (o observation) digest(oci string) (string, error) {
	o.OCIDigest = oci
	h := sha256.New()
	if err := json.NewEncoder(h).Encode(o); err != nil {
		return "", err
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// digesters returns the digesters of o as helm-controller v1.6.4 encodes
// it (rollback_revision cleared) and, for a rollback, as a helm-controller
// built with Helm >= v4.3 does (kept).
func digesters(o observation) (v164, withRollback *digester, err error) {
	rev := o.Info.RollbackRevision
	o.Info.RollbackRevision = 0
	d, err := newDigester(o)
	if err != nil {
		return nil, nil, err
	}
	if rev == 0 {
		return &d, nil, nil
	}
	o.Info.RollbackRevision = rev
	r, err := newDigester(o)
	if err != nil {
		return nil, nil, err
	}
	return &d, &r, nil
}

// matchesDigest reports whether want is the digest helm-controller recorded
// for this release when its artifact had OCI digest oci. It also accepts the
// encoding of a helm-controller built with Helm >= v4.3, which keeps a
// rollback's rollback_revision, so an upgraded Flux does not look like a
// foreign release.
func (r *Release) matchesDigest(want, oci string) bool {
	if r.v164 == nil {
		return oci == "" && want == r.Digest
	}
	if got, err := r.v164.digest(oci); err == nil && got == want {
		return true
	}
	if r.withRollback == nil {
		return false
	}
	got, err := r.withRollback.digest(oci)
	return err == nil && got == want
}
