package release

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	. "github.com/onsi/gomega"
	"github.com/opencontainers/go-digest"
	helmv1 "helm.sh/helm/v4/pkg/release/v1"
	"k8s.io/apimachinery/pkg/types"
)

// snapshotOf returns the snapshot helm-controller records for rel, changed
// by mutate.
func snapshotOf(rel *Release, mutate func(s *helmv2.Snapshot)) *helmv2.Snapshot {
	s := &helmv2.Snapshot{
		APIVersion: helmv2.CurrentSnapshotAPIVersion,
		Name:       rel.Name,
		Namespace:  rel.Namespace,
		Version:    rel.Version,
		Digest:     rel.Digest,
	}
	if mutate != nil {
		mutate(s)
	}
	return s
}

func TestVerifySnapshot(t *testing.T) {
	rel := decodeFixture(t, "full.json") // cluster in capi-system, v3
	ociSnapDigest := "sha256:d251b0600f4f753980b6feb3ab1e86c592dcbfb7df41614cb626bc5ad4a55abe"
	snap := func(mutate func(s *helmv2.Snapshot)) *helmv2.Snapshot { return snapshotOf(rel, mutate) }
	tests := []struct {
		name    string           // case
		rel     *Release         // release read from storage
		snap    *helmv2.Snapshot // status.history.Latest()
		wantMsg string           // substring of the error; "" means no error
	}{
		{name: "match", rel: rel, snap: snap(nil)},
		{name: "match with OCI digest", rel: rel, snap: snap(func(s *helmv2.Snapshot) {
			s.OCIDigest, s.Digest = ociDigest, ociSnapDigest
		})},
		{name: "OCI digest missing from the match", rel: rel, snap: snap(func(s *helmv2.Snapshot) {
			s.Digest = ociSnapDigest
		}), wantMsg: "digest differs"},
		{name: "name mismatch", rel: rel, snap: snap(func(s *helmv2.Snapshot) { s.Name = "other" }),
			wantMsg: `name differs (release "cluster", snapshot "other")`},
		{name: "namespace mismatch", rel: rel, snap: snap(func(s *helmv2.Snapshot) { s.Namespace = "default" }),
			wantMsg: `namespace differs (release "capi-system", snapshot "default")`},
		{name: "version mismatch", rel: rel, snap: snap(func(s *helmv2.Snapshot) { s.Version = 2 }),
			wantMsg: "version differs (release 3, snapshot 2)"},
		{name: "digest mismatch", rel: rel, snap: snap(func(s *helmv2.Snapshot) {
			s.Digest = "sha256:0000000000000000000000000000000000000000000000000000000000000000"
		}), wantMsg: "digest differs"},
		{name: "empty digest skips the digest check", rel: rel, snap: snap(func(s *helmv2.Snapshot) { s.Digest = "" })},
		{name: "legacy snapshot skips the digest check", rel: rel, snap: snap(func(s *helmv2.Snapshot) {
			s.APIVersion, s.Digest = "", "sha256:0000000000000000000000000000000000000000000000000000000000000000"
		})},
		{name: "legacy snapshot still checks the version", rel: rel, snap: snap(func(s *helmv2.Snapshot) {
			s.APIVersion, s.Version = "", 4
		}), wantMsg: "version differs"},
		{name: "nil snapshot", rel: rel, snap: nil, wantMsg: "history has no snapshot"},
		{name: "nil release", rel: nil, snap: snap(nil), wantMsg: "no release"},
		{name: "hand-made release matches its own digest", rel: &Release{Name: "cluster", Namespace: "capi-system", Version: 3, Digest: rel.Digest}, snap: snap(nil)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			err := VerifySnapshot(tt.rel, tt.snap)
			if tt.wantMsg == "" {
				g.Expect(err).NotTo(HaveOccurred())
				return
			}
			g.Expect(err).To(MatchError(ErrHistoryMismatch))
			g.Expect(err.Error()).To(ContainSubstring(tt.wantMsg))
			g.Expect(err.Error()).To(HavePrefix("failed to verify release"))
		})
	}
}

// TestVerifySnapshotOfLatest checks VerifySnapshot against history.Latest(),
// which is how the pipeline calls it.
func TestVerifySnapshotOfLatest(t *testing.T) {
	g := NewWithT(t)
	rel := decodeFixture(t, "full.json")
	history := helmv2.Snapshots{
		{APIVersion: helmv2.CurrentSnapshotAPIVersion, Name: "cluster", Namespace: "capi-system", Version: 3, Digest: rel.Digest},
		{APIVersion: helmv2.CurrentSnapshotAPIVersion, Name: "cluster", Namespace: "capi-system", Version: 2, Digest: "sha256:00"},
	}
	g.Expect(VerifySnapshot(rel, history.Latest())).To(Succeed())
	g.Expect(VerifySnapshot(rel, helmv2.Snapshots{}.Latest())).To(MatchError(ErrHistoryMismatch))
}

// TestVerifySnapshotAlgorithms: a snapshot whose digest helm-controller
// computed with another --snapshot-digest-algo is verified with the
// algorithm it names. Each digest is computed in the test as helm-controller
// does (json.NewEncoder over the observation, then the algorithm); the
// release is read with Reader.GetFor, as the pipeline reads it, and a
// digest of the same algorithm for other content does not match.
func TestVerifySnapshotAlgorithms(t *testing.T) {
	tests := []struct {
		algo string // helm-controller's --snapshot-digest-algo
		file string // fixture in testdata/digest
		oci  string // OCI digest of the HelmRelease's artifact
		// keepRollback encodes rollback_revision, as a helm-controller
		// built with Helm >= v4.3 does.
		keepRollback bool
	}{
		{algo: "sha256", file: "full.json"},
		{algo: "sha384", file: "full.json"},
		{algo: "sha512", file: "full.json"},
		{algo: "sha384", file: "full.json", oci: ociDigest},
		{algo: "sha512", file: "minimal.json", oci: ociDigest},
		{algo: "sha512", file: "rollback.json"},
		{algo: "sha384", file: "rollback.json", keepRollback: true},
		{algo: "sha512", file: "testhooks-only.json"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%s/oci=%s/keepRollback=%t", tt.algo, tt.file, tt.oci, tt.keepRollback), func(t *testing.T) {
			g := NewWithT(t)
			data, name, version := fixtureJSON(t, tt.file)
			var rls helmv1.Release
			g.Expect(json.Unmarshal(data, &rls)).To(Succeed())
			want := upstreamDigestWith(t, tt.algo, &rls, tt.oci, tt.keepRollback)
			g.Expect(want).To(HavePrefix(tt.algo + ":"))

			snap := &helmv2.Snapshot{APIVersion: helmv2.CurrentSnapshotAPIVersion, Name: name, Namespace: rls.Namespace,
				Version: version, Digest: want, OCIDigest: tt.oci}
			rel, err := NewReader(0).GetFor(t.Context(), fakeSource(name, version, helmEncode(t, data)), "ns", name, snap, nil)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(VerifySnapshot(rel, snap)).To(Succeed())

			// Another release's digest of the same algorithm does not match.
			other := rls
			other.Manifest += "# changed\n"
			snap.Digest = upstreamDigestWith(t, tt.algo, &other, tt.oci, tt.keepRollback)
			err = VerifySnapshot(rel, snap)
			g.Expect(err).To(MatchError(ErrHistoryMismatch))
			g.Expect(err.Error()).To(ContainSubstring("digest differs"))
		})
	}
}

// TestVerifySnapshotUnverifiableDigest: a digest that is malformed, or
// names an algorithm the add-on does not compute (helm-controller also
// offers blake3 and sha1), fails with ErrUnverifiableDigest and a message
// that quotes the digest and says why, never as a mismatch.
func TestVerifySnapshotUnverifiableDigest(t *testing.T) {
	rel := decodeFixture(t, "full.json")
	hex64 := strings.Repeat("ab", 32)
	tests := []struct {
		name    string // case
		digest  string // status.history's digest
		wantMsg string // substring of the error
	}{
		{name: "sha1", digest: "sha1:" + strings.Repeat("ab", 20),
			wantMsg: `names algorithm sha1, which the add-on does not compute (it computes sha256, sha384, sha512)`},
		{name: "blake3", digest: "blake3:" + hex64, wantMsg: "names algorithm blake3, which the add-on does not compute"},
		{name: "unknown algorithm", digest: "md5:" + strings.Repeat("ab", 16), wantMsg: "names algorithm md5"},
		{name: "no algorithm", digest: hex64, wantMsg: "is malformed: invalid checksum digest format"},
		{name: "upper-case algorithm", digest: "SHA256:" + hex64, wantMsg: "is malformed"},
		{name: "short sha256", digest: "sha256:abc", wantMsg: "is malformed: invalid checksum digest length"},
		{name: "sha512 of sha256's length", digest: "sha512:" + hex64, wantMsg: "is malformed: invalid checksum digest length"},
		{name: "upper-case hex", digest: "sha256:" + strings.ToUpper(hex64), wantMsg: "is malformed: invalid checksum digest format"},
		{name: "empty encoding", digest: "sha256:", wantMsg: "is malformed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			err := VerifySnapshot(rel, snapshotOf(rel, func(s *helmv2.Snapshot) { s.Digest = tt.digest }))
			g.Expect(err).To(MatchError(ErrUnverifiableDigest))
			g.Expect(err).NotTo(MatchError(ErrHistoryMismatch))
			g.Expect(err.Error()).To(HavePrefix("failed to verify release capi-system/cluster.v3 against history: status.history digest cannot be verified: " +
				strconv.Quote(tt.digest)))
			g.Expect(err.Error()).To(ContainSubstring(tt.wantMsg))
			g.Expect(NewReader(0).NoteSnapshot(snapshotOf(rel, func(s *helmv2.Snapshot) { s.Digest = tt.digest }))).To(BeEmpty(),
				"a digest that cannot be verified adds no algorithm")
		})
	}
}

// TestGetForMeetsAlgorithms: a Reader decodes a release with the
// digesters of the algorithms it has met, sha256 always; a release
// memoized before an algorithm was met is decoded once more, then served
// from the memo; a snapshot noted first (as the warm-up notes them) costs
// no second decode.
func TestGetForMeetsAlgorithms(t *testing.T) {
	g := NewWithT(t)
	data, name, version := fixtureJSON(t, "full.json")
	var rls helmv1.Release
	g.Expect(json.Unmarshal(data, &rls)).To(Succeed())
	src := fakeSource(name, version, helmEncode(t, data))
	key := SecretName(name, version)
	stored := []Stored{{Version: version, Status: "deployed", UID: types.UID("uid-" + key), ResourceVersion: "1"}}
	snap := func(algo string) *helmv2.Snapshot {
		return &helmv2.Snapshot{APIVersion: helmv2.CurrentSnapshotAPIVersion, Name: name, Namespace: rls.Namespace,
			Version: version, Digest: upstreamDigestWith(t, algo, &rls, "", false)}
	}
	algos := func(rel *Release) []digest.Algorithm {
		var out []digest.Algorithm
		for _, p := range rel.digesters {
			out = append(out, p.algo())
		}
		return out
	}
	read := func(r *Reader, s *helmv2.Snapshot) *Release {
		rel, err := r.GetFor(t.Context(), src, "ns", name, s, stored)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(VerifySnapshot(rel, s)).To(Succeed())
		return rel
	}

	r := NewReader(0)
	g.Expect(algos(read(r, snap("sha256")))).To(Equal([]digest.Algorithm{digest.SHA256}))
	g.Expect(r.decodes.Load()).To(BeEquivalentTo(1))
	g.Expect(algos(read(r, snap("sha512")))).To(Equal([]digest.Algorithm{digest.SHA256, digest.SHA512}))
	g.Expect(r.decodes.Load()).To(BeEquivalentTo(2), "memoized without sha512: decoded once more")
	read(r, snap("sha512"))
	read(r, snap("sha256"))
	g.Expect(r.decodes.Load()).To(BeEquivalentTo(2), "served from the memo")
	g.Expect(algos(read(r, snap("sha384")))).To(Equal(supportedAlgorithms))
	g.Expect(r.decodes.Load()).To(BeEquivalentTo(3))
	g.Expect(MemoLen(r)).To(Equal(1))

	noted := NewReader(0)
	g.Expect(noted.NoteSnapshot(snap("sha384"))).To(Equal(digest.SHA384))
	g.Expect(algos(read(noted, snap("sha384")))).To(Equal([]digest.Algorithm{digest.SHA256, digest.SHA384}))
	g.Expect(noted.decodes.Load()).To(BeEquivalentTo(1), "noted first: decoded once, with sha384")

	// A legacy snapshot or one without a digest adds no algorithm.
	g.Expect(noted.NoteSnapshot(&helmv2.Snapshot{Digest: snap("sha512").Digest})).To(BeEmpty())
	g.Expect(noted.NoteSnapshot(&helmv2.Snapshot{APIVersion: helmv2.CurrentSnapshotAPIVersion})).To(BeEmpty())
	g.Expect(noted.algorithms.list()).To(Equal([]digest.Algorithm{digest.SHA256, digest.SHA384}))
}
