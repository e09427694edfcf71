package release

import (
	_ "crypto/sha256" // sha256 for go-digest, helm-controller's default
	_ "crypto/sha512" // sha384 and sha512 for go-digest
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/opencontainers/go-digest"
)

// supportedAlgorithms are the algorithms of helm-controller's
// --snapshot-digest-algo that this package computes status.history
// digests with, sha256 (helm-controller's default) first.
var supportedAlgorithms = []digest.Algorithm{digest.SHA256, digest.SHA384, digest.SHA512}

// supported reports whether a is one of supportedAlgorithms, linked in.
func supported(a digest.Algorithm) bool {
	return slices.Contains(supportedAlgorithms, a) && a.Available()
}

// supportedNames lists supportedAlgorithms for messages.
func supportedNames() string {
	names := make([]string, len(supportedAlgorithms))
	for i, a := range supportedAlgorithms {
		names[i] = a.String()
	}
	return strings.Join(names, ", ")
}

// parseDigest parses a digest status.history records, as helm-controller's
// verification does (go-digest), and accepts only the algorithms this
// package computes. Its error, which wraps ErrUnverifiableDigest, says what
// is wrong with the digest and quotes it.
func parseDigest(s string) (digest.Digest, error) {
	d, err := digest.Parse(s)
	switch {
	case errors.Is(err, digest.ErrDigestUnsupported):
		algo, _, _ := strings.Cut(s, ":")
		return "", fmt.Errorf("%w: %q names algorithm %s, which the add-on does not compute (it computes %s)",
			ErrUnverifiableDigest, s, algo, supportedNames())
	case err != nil:
		return "", fmt.Errorf("%w: %q is malformed: %w", ErrUnverifiableDigest, s, err)
	case !supported(d.Algorithm()):
		return "", fmt.Errorf("%w: %q names algorithm %s, which the add-on does not compute (it computes %s)",
			ErrUnverifiableDigest, s, d.Algorithm(), supportedNames())
	}
	return d, nil
}

// checkedDigest returns the digest VerifySnapshot compares snap's release
// with, "" when it compares none: no digest, or a snapshot of
// helm-controller < v1.5 (see VerifySnapshot).
func checkedDigest(snap *helmv2.Snapshot) string {
	if snap == nil || snap.APIVersion != helmv2.CurrentSnapshotAPIVersion {
		return ""
	}
	return snap.Digest
}

// algorithmSet is a set of supportedAlgorithms, safe for concurrent use:
// the algorithms a Reader has met in status.history, which every release
// it decodes gets a digester for. sha256 is always in it.
type algorithmSet struct{ bits atomic.Uint32 }

// add puts a in the set; it reports whether a was not in it yet.
func (s *algorithmSet) add(a digest.Algorithm) bool {
	i := slices.Index(supportedAlgorithms, a)
	if i <= 0 { // sha256, always in, or not supported
		return false
	}
	bit := uint32(1) << i
	return s.bits.Or(bit)&bit == 0
}

// list returns the set's algorithms in supportedAlgorithms' order.
func (s *algorithmSet) list() []digest.Algorithm {
	bits := s.bits.Load() | 1
	var out []digest.Algorithm
	for i, a := range supportedAlgorithms {
		if bits&(1<<i) != 0 {
			out = append(out, a)
		}
	}
	return out
}
