package release

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/opencontainers/go-digest"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	helmv1 "helm.sh/helm/v4/pkg/release/v1"
)

// observation reproduces helm-controller v1.6.4's release.Observation
// (internal/release/observation.go): same fields, same order, same JSON tags.
// helm-controller's snapshot digest is a hash (sha256 by default, else
// --snapshot-digest-algo's) over its JSON encoding, so any difference here
// changes every digest.
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
// observation with its default algorithm (sha256) when the HelmRelease's
// artifact has OCI digest oci ("" for non-OCI sources).
//
// helm-controller v1.6.4 is built with Helm v4.2.4, whose release Info has no
// rollback_revision (added in Helm v4.3). It never sees that field, so it is
// cleared here to encode exactly what v1.6.4 encodes.
func (o observation) digestV164(oci string) (string, error) {
	o.Info.RollbackRevision = 0
	return o.digest(oci)
}

// digest encodes o with OCIDigest oci the way helm-controller does with
// its default algorithm: json.NewEncoder (HTML escaping on, trailing
// newline) into sha256.
func (o observation) digest(oci string) (string, error) {
	return o.digestWith(digest.SHA256, oci)
}

// digestWith is digest with algorithm a, as helm-controller computes it
// under --snapshot-digest-algo=a.
func (o observation) digestWith(a digest.Algorithm, oci string) (string, error) {
	if !supported(a) {
		return "", fmt.Errorf("digest algorithm %q is not supported", a)
	}
	o.OCIDigest = oci
	d := a.Digester()
	if err := json.NewEncoder(d.Hash()).Encode(o); err != nil {
		return "", err
	}
	return d.Digest().String(), nil
}

// digesterPair is a release's digesters of one algorithm: v164 for the
// release as helm-controller v1.6.4 encodes it (rollback_revision cleared)
// and, for a rollback, withRollback as a helm-controller built with Helm
// >= v4.3 does (kept); nil otherwise.
type digesterPair struct {
	v164, withRollback *digester
}

// algo is the algorithm of the pair.
func (d digesterPair) algo() digest.Algorithm { return d.v164.algo }

// newReleaseDigesters returns o's digesters for each of algos, in algos'
// order, encoding o once (twice for a rollback) whatever their number.
func newReleaseDigesters(o observation, algos []digest.Algorithm) ([]digesterPair, error) {
	rev := o.Info.RollbackRevision
	o.Info.RollbackRevision = 0
	v164, err := newDigesters(o, algos)
	if err != nil {
		return nil, err
	}
	out := make([]digesterPair, len(algos))
	for i := range v164 {
		out[i].v164 = &v164[i]
	}
	if rev == 0 {
		return out, nil
	}
	o.Info.RollbackRevision = rev
	withRollback, err := newDigesters(o, algos)
	if err != nil {
		return nil, err
	}
	for i := range withRollback {
		out[i].withRollback = &withRollback[i]
	}
	return out, nil
}

// digestersOf returns the release's digesters of algorithm a, nil when it
// was decoded without them.
func (r *Release) digestersOf(a digest.Algorithm) *digesterPair {
	for i := range r.digesters {
		if r.digesters[i].algo() == a {
			return &r.digesters[i]
		}
	}
	return nil
}

// matchesDigest reports whether want is the digest helm-controller recorded
// for this release when its artifact had OCI digest oci, computed with the
// algorithm want names. It also accepts the encoding of a helm-controller
// built with Helm >= v4.3, which keeps a rollback's rollback_revision, so an
// upgraded Flux does not look like a foreign release. It fails when the
// release was decoded without digesters of that algorithm (Reader.GetFor
// gives a release them).
func (r *Release) matchesDigest(want digest.Digest, oci string) (bool, error) {
	if len(r.digesters) == 0 { // a Release made by hand: Digest is all it has
		return oci == "" && string(want) == r.Digest, nil
	}
	d := r.digestersOf(want.Algorithm())
	if d == nil {
		return false, fmt.Errorf("release %s was read without a %s digester", r.Ref(), want.Algorithm())
	}
	for _, dg := range []*digester{d.v164, d.withRollback} {
		if dg == nil {
			continue
		}
		if got, err := dg.digest(oci); err == nil && got == string(want) {
			return true, nil
		}
	}
	return false, nil
}
