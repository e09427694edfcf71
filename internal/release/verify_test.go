package release

import (
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	. "github.com/onsi/gomega"
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
