package release

import (
	"bytes"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"hash"
	"os"
	"slices"
	"testing"

	. "github.com/onsi/gomega"
	"github.com/opencontainers/go-digest"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	helmv1 "helm.sh/helm/v4/pkg/release/v1"
)

// ociDigest is an artifact digest a HelmRelease with an OCI chart source
// records in its snapshots (taken from helm-controller's tests).
const ociDigest = "sha256:fcdc2b0de1581a3633ada4afee3f918f6eaa5b5ab38c3fef03d5b48d3f85d9f6"

// TestDigestGolden compares Release.Digest with digests helm-controller
// v1.6.4's own code computed for the fixtures: ObserveRelease + Digest from
// its internal/release package, built with Helm v4.2.4 (see
// testdata/README.md). This is the proof that the digest is helm-controller's.
func TestDigestGolden(t *testing.T) {
	tests := []struct {
		file string // fixture in testdata/digest
		oci  string // OCI digest helm-controller mixes in from the HelmRelease
		want string // digest computed by helm-controller v1.6.4
	}{
		{file: "full.json", want: "sha256:898251128bef55db745cb85056c290472e5874773d101c7a063087173bdf84df"},
		{file: "full.json", oci: ociDigest, want: "sha256:d251b0600f4f753980b6feb3ab1e86c592dcbfb7df41614cb626bc5ad4a55abe"},
		{file: "minimal.json", want: "sha256:d2c2b4f2bef66a1b04c9f626f43b86093e03936958485afbd842ab124a7f4802"},
		{file: "minimal.json", oci: ociDigest, want: "sha256:39a981ce47002c24545d820e39bd691961652b892609a5b811bc052c84ca6ef2"},
		{file: "rollback.json", want: "sha256:e380fa39b54aecdc0bbec239021f71a06fd4715890c64783ba4c14a0d489bd83"},
		{file: "rollback.json", oci: ociDigest, want: "sha256:3d7ef805eba57685c4b70a50ed775f61f7a0270b279f3818ab104231890ebb8f"},
		{file: "testhooks-only.json", want: "sha256:2417b0da1cb631aeb7db2466450735f62bbff011f3be062b64c57e5853576a42"},
		{file: "testhooks-only.json", oci: ociDigest, want: "sha256:d0184502da63ec6207fb4385b3e97c260ae74160307172d4024b23d3fb182971"},
	}
	for _, tt := range tests {
		t.Run(tt.file+"/oci="+tt.oci, func(t *testing.T) {
			g := NewWithT(t)
			rel := decodeFixture(t, tt.file)
			got, err := rel.digestersOf(digest.SHA256).v164.digest(tt.oci)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(Equal(tt.want))
			g.Expect(rel.matchesDigest(digest.Digest(tt.want), tt.oci)).To(BeTrue())
			if tt.oci == "" {
				g.Expect(rel.Digest).To(Equal(tt.want))
			}
		})
	}
}

// TestDigestUpstreamZeroObservation reuses the only fixed digest in
// helm-controller v1.6.4's tests (internal/release/digest_test.go).
func TestDigestUpstreamZeroObservation(t *testing.T) {
	g := NewWithT(t)
	got, err := observation{Name: "foo"}.digest("")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(Equal("sha256:f1498f27a16a09cd7e1ee610d924df065c03d30035638babc95dd9a8d412ce4d"))
}

// TestDigestRealRelease decodes a data.release value written by Helm (from
// helm-controller's testdata) and checks the digest helm-controller v1.6.4
// computes for it.
func TestDigestRealRelease(t *testing.T) {
	g := NewWithT(t)
	data, err := os.ReadFile("testdata/podinfo-helm-1")
	g.Expect(err).NotTo(HaveOccurred())
	rel, err := NewReader(0).Get(t.Context(), fakeSource("podinfo-helmrepository", 1, data), "default", "podinfo-helmrepository", 1)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(rel.Ref()).To(Equal("default/podinfo-helmrepository.v1"))
	g.Expect(rel.Status).To(Equal("deployed"))
	g.Expect(rel.ChartName).To(Equal("podinfo"))
	g.Expect(rel.ApplyMethod).To(BeEmpty(), "written by Helm 3")
	g.Expect(rel.Digest).To(Equal("sha256:a768ef17bdb09aeae27a64c4a6ee34e3197bbd2f30e46879f5f586f883b22855"))
}

// TestDigestIndependent recomputes each fixture's digest the way
// helm-controller's ObserveRelease and Digest do, step by step, from the
// release JSON, without this package's observe.
func TestDigestIndependent(t *testing.T) {
	for _, file := range []string{"full.json", "minimal.json", "rollback.json", "testhooks-only.json"} {
		t.Run(file, func(t *testing.T) {
			g := NewWithT(t)
			data, _, _ := fixtureJSON(t, file)
			var rls helmv1.Release
			g.Expect(json.Unmarshal(data, &rls)).To(Succeed())
			g.Expect(decodeFixture(t, file).Digest).To(Equal(upstreamDigest(t, &rls, "", false)))
		})
	}
}

// TestDigestRollbackRevision shows why rollback_revision is cleared: Helm
// v4.3 added it to Info, helm-controller v1.6.4 (Helm v4.2.4) never sees it.
// A helm-controller built with Helm >= v4.3 would keep it; VerifySnapshot
// accepts both.
func TestDigestRollbackRevision(t *testing.T) {
	g := NewWithT(t)
	rel := decodeFixture(t, "rollback.json")
	data, _, _ := fixtureJSON(t, "rollback.json")
	var rls helmv1.Release
	g.Expect(json.Unmarshal(data, &rls)).To(Succeed())
	g.Expect(rls.Info.RollbackRevision).To(Equal(3))

	withRevision := upstreamDigest(t, &rls, "", true)
	g.Expect(withRevision).NotTo(Equal(rel.Digest))
	g.Expect(rel.matchesDigest(digest.Digest(withRevision), "")).To(BeTrue())
	g.Expect(rel.matchesDigest(digest.Digest(upstreamDigest(t, &rls, ociDigest, true)), ociDigest)).To(BeTrue())
}

// TestDigestIgnoresTestHooks checks the digest is blind to test hooks (so
// `helm test` does not change it) and not to the others.
func TestDigestIgnoresTestHooks(t *testing.T) {
	g := NewWithT(t)
	data, _, _ := fixtureJSON(t, "full.json")
	var rls helmv1.Release
	g.Expect(json.Unmarshal(data, &rls)).To(Succeed())
	base := observe(&rls)
	want, err := base.digestV164("")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(base.Hooks).To(HaveLen(2))

	rls.Hooks[1].LastRun.Phase = helmv1.HookPhaseFailed // the test hook
	g.Expect(observe(&rls).digestV164("")).To(Equal(want))

	rls.Hooks[0].LastRun.Phase = helmv1.HookPhaseFailed // a pre-install hook
	g.Expect(observe(&rls).digestV164("")).NotTo(Equal(want))
}

// upstreamObservation is helm-controller v1.6.4's release.Observation as
// written there (Action typed as a string here).
type upstreamObservation struct {
	Name          string         `json:"name"`
	Version       int            `json:"version"`
	Info          helmv1.Info    `json:"info"`
	Action        string         `json:"-"`
	ChartMetadata chart.Metadata `json:"chartMetadata"`
	Config        map[string]any `json:"config"`
	Manifest      string         `json:"manifest"`
	Hooks         []helmv1.Hook  `json:"hooks"`
	Namespace     string         `json:"namespace"`
	OCIDigest     string         `json:"ociDigest,omitempty"`
}

// upstreamDigest follows helm-controller's ObserveRelease,
// IgnoreHookTestEvents and Digest with its default algorithm, sha256.
// keepRollback keeps Info.RollbackRevision, which only a helm-controller
// built with Helm >= v4.3 encodes.
func upstreamDigest(t testing.TB, rel *helmv1.Release, oci string, keepRollback bool) string {
	t.Helper()
	return upstreamDigestWith(t, "sha256", rel, oci, keepRollback)
}

// upstreamHashes are the hashes of helm-controller's
// --snapshot-digest-algo values this package computes, from the standard
// library rather than go-digest, so that the test computes them apart from
// the code it checks.
var upstreamHashes = map[string]func() hash.Hash{"sha256": sha256.New, "sha384": sha512.New384, "sha512": sha512.New}

// upstreamDigestWith is upstreamDigest for a helm-controller run with
// --snapshot-digest-algo=algo: json.NewEncoder over the observation into
// the algorithm's hash, written "<algo>:<hex>".
func upstreamDigestWith(t testing.TB, algo string, rel *helmv1.Release, oci string, keepRollback bool) string {
	t.Helper()
	newHash, ok := upstreamHashes[algo]
	if !ok {
		t.Fatalf("no hash for algorithm %q", algo)
	}
	obs := upstreamObservation{Name: rel.Name, Version: rel.Version, Manifest: rel.Manifest, Namespace: rel.Namespace, OCIDigest: oci}
	if rel.Info != nil {
		obs.Info = *rel.Info
	}
	if !keepRollback {
		obs.Info.RollbackRevision = 0
	}
	if rel.Chart != nil && rel.Chart.Metadata != nil {
		obs.ChartMetadata = *rel.Chart.Metadata
	}
	if len(rel.Config) > 0 {
		obs.Config = rel.Config
	}
	if len(rel.Hooks) > 0 {
		var hooks []helmv1.Hook
		for _, h := range rel.Hooks {
			if !slices.Contains(h.Events, helmv1.HookTest) {
				hooks = append(hooks, *h)
			}
		}
		obs.Hooks = hooks
	}
	h := newHash()
	if err := json.NewEncoder(h).Encode(obs); err != nil {
		t.Fatal(err)
	}
	return algo + ":" + hex.EncodeToString(h.Sum(nil))
}

// TestDigesterMatchesFullEncoding: completing the kept state of each
// algorithm with an OCI digest gives exactly the digest of the whole
// observation encoded with it, for every fixture, with an OCI digest that
// JSON must escape too, in both encodings (rollback_revision cleared and
// kept).
func TestDigesterMatchesFullEncoding(t *testing.T) {
	for _, file := range []string{"full.json", "minimal.json", "rollback.json", "testhooks-only.json"} {
		for _, oci := range []string{"", ociDigest, `sha256:<a&b>"\`} {
			t.Run(file+"/oci="+oci, func(t *testing.T) {
				g := NewWithT(t)
				data, _, _ := fixtureJSON(t, file)
				var rls helmv1.Release
				g.Expect(json.Unmarshal(data, &rls)).To(Succeed())
				obs := observe(&rls)
				pairs, err := newReleaseDigesters(obs, supportedAlgorithms)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(pairs).To(HaveLen(len(supportedAlgorithms)))
				cleared := obs
				cleared.Info.RollbackRevision = 0
				for i, a := range supportedAlgorithms {
					p := pairs[i]
					g.Expect(p.algo()).To(Equal(a))
					want, err := cleared.digestWith(a, oci)
					g.Expect(err).NotTo(HaveOccurred())
					g.Expect(p.v164.digest(oci)).To(Equal(want), "%s", a)
					if obs.Info.RollbackRevision == 0 {
						g.Expect(p.withRollback).To(BeNil())
						continue
					}
					want, err = obs.digestWith(a, oci)
					g.Expect(err).NotTo(HaveOccurred())
					g.Expect(p.withRollback.digest(oci)).To(Equal(want), "%s", a)
				}
			})
		}
	}
}

// TestHoldBack: whatever the sizes of the writes, everything but the last
// two bytes reaches the writer, in order, and the last two are held.
func TestHoldBack(t *testing.T) {
	const text = `{"name":"r","manifest":"---"}` + "\n"
	for _, sizes := range [][]int{{len(text)}, {1, 1, 1, len(text) - 3}, {len(text) - 1, 1}, {len(text) - 2, 2}, {2, 1, len(text) - 4, 1}} {
		g := NewWithT(t)
		var out bytes.Buffer
		h := &holdBack{w: &out}
		rest := text
		for _, n := range sizes {
			_, err := h.Write([]byte(rest[:n]))
			g.Expect(err).NotTo(HaveOccurred())
			rest = rest[n:]
		}
		g.Expect(out.String()).To(Equal(text[:len(text)-2]), "sizes %v", sizes)
		g.Expect(string(h.tail)).To(Equal("}\n"), "sizes %v", sizes)
	}
}
