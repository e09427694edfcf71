package release

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"

	"github.com/opencontainers/go-digest"
)

// digester completes helm-controller's digest of one observation, with one
// algorithm, for any OCI digest, without keeping the observation.
// helm-controller encodes the observation with json.Encoder and hashes it;
// ociDigest is its last field and omitted when empty, so every encoding
// shares the bytes before the closing brace. The digester keeps the hash's
// state after them (about 100 bytes for sha256, 200 for sha384 and sha512)
// instead of the release's values and hooks, which a memoized release would
// otherwise hold for as long as it is memoized.
type digester struct {
	algo  digest.Algorithm
	state []byte
}

// newDigesters hashes o's encoding up to its closing brace with each of
// algos, encoding it once: the encoding is streamed into every algorithm's
// hash but for its last two bytes. It returns one digester an algorithm,
// in algos' order. Every algorithm must be one of supportedAlgorithms.
func newDigesters(o observation, algos []digest.Algorithm) ([]digester, error) {
	o.OCIDigest = ""
	hashes := make([]hash.Hash, len(algos))
	writers := make([]io.Writer, len(algos))
	for i, a := range algos {
		if !supported(a) {
			return nil, fmt.Errorf("digest algorithm %q is not supported", a)
		}
		hashes[i] = a.Hash()
		writers[i] = hashes[i]
	}
	w := &holdBack{w: io.MultiWriter(writers...)}
	if err := json.NewEncoder(w).Encode(o); err != nil {
		return nil, err
	}
	if string(w.tail) != "}\n" {
		return nil, fmt.Errorf("unexpected encoding of the observation: ends in %q", w.tail)
	}
	out := make([]digester, len(algos))
	for i, h := range hashes {
		m, ok := h.(encoding.BinaryMarshaler)
		if !ok {
			return nil, fmt.Errorf("the %s hash cannot save its state", algos[i])
		}
		state, err := m.MarshalBinary()
		if err != nil {
			return nil, err
		}
		out[i] = digester{algo: algos[i], state: state}
	}
	return out, nil
}

// digest returns what json.Encoder and the digester's algorithm make of the
// observation with OCIDigest oci: `,"ociDigest":<oci as JSON>` when oci is
// set, then the closing brace and the encoder's newline.
func (d digester) digest(oci string) (string, error) {
	if d.state == nil || !supported(d.algo) {
		return "", errors.New("no digest state")
	}
	h := d.algo.Hash()
	u, ok := h.(encoding.BinaryUnmarshaler)
	if !ok {
		return "", fmt.Errorf("the %s hash cannot restore its state", d.algo)
	}
	if err := u.UnmarshalBinary(d.state); err != nil {
		return "", err
	}
	if oci != "" {
		var v bytes.Buffer
		if err := json.NewEncoder(&v).Encode(oci); err != nil {
			return "", err
		}
		h.Write([]byte(`,"ociDigest":`))
		h.Write(bytes.TrimSuffix(v.Bytes(), []byte("\n")))
	}
	h.Write([]byte("}\n"))
	return digest.NewDigest(d.algo, h).String(), nil
}

// holdBack writes everything to w but the last two bytes written, which it
// keeps in tail.
type holdBack struct {
	w    io.Writer
	tail []byte
}

func (h *holdBack) Write(p []byte) (int, error) {
	n := len(p)
	if len(h.tail)+n <= 2 {
		h.tail = append(h.tail, p...)
		return n, nil
	}
	// Of the held bytes, those not among the last two of tail+p go now,
	// then p but its last two (or fewer).
	keep := max(0, 2-n) // held bytes that stay held
	if flush := len(h.tail) - keep; flush > 0 {
		if _, err := h.w.Write(h.tail[:flush]); err != nil {
			return 0, err
		}
	}
	if n > 2 {
		if _, err := h.w.Write(p[:n-2]); err != nil {
			return 0, err
		}
	}
	tail := make([]byte, 0, 2)
	tail = append(tail, h.tail[len(h.tail)-keep:]...)
	h.tail = append(tail, p[max(0, n-2):]...)
	return n, nil
}
