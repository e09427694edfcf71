package release

import (
	"bytes"
	"crypto/sha256"
	"encoding"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// digester completes helm-controller's digest of one observation for any
// OCI digest, without keeping the observation. helm-controller encodes the
// observation with json.Encoder and hashes it; ociDigest is its last field
// and omitted when empty, so every encoding shares the bytes before the
// closing brace. The digester keeps sha256's state after them (about 100
// bytes) instead of the release's values and hooks, which a memoized
// release would otherwise hold for as long as it is memoized.
type digester struct{ state []byte }

// newDigester hashes o's encoding up to its closing brace, streaming it
// into sha256 but for its last two bytes.
func newDigester(o observation) (digester, error) {
	o.OCIDigest = ""
	h := sha256.New()
	w := &holdBack{w: h}
	if err := json.NewEncoder(w).Encode(o); err != nil {
		return digester{}, err
	}
	if string(w.tail) != "}\n" {
		return digester{}, fmt.Errorf("unexpected encoding of the observation: ends in %q", w.tail)
	}
	state, err := h.(encoding.BinaryMarshaler).MarshalBinary()
	if err != nil {
		return digester{}, err
	}
	return digester{state: state}, nil
}

// digest returns what json.Encoder and sha256 make of the observation with
// OCIDigest oci: `,"ociDigest":<oci as JSON>` when oci is set, then the
// closing brace and the encoder's newline.
func (d digester) digest(oci string) (string, error) {
	if d.state == nil {
		return "", errors.New("no digest state")
	}
	h := sha256.New()
	if err := h.(encoding.BinaryUnmarshaler).UnmarshalBinary(d.state); err != nil {
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
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
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
