package release

import (
	"bytes"
	"crypto/sha256"
	"encoding"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
)

// digester completes helm-controller's digest of one observation for any
// OCI digest, without keeping the observation. helm-controller encodes the
// observation with json.Encoder and hashes it; ociDigest is its last field
// and omitted when empty, so every encoding shares the bytes before the
// closing brace. The digester keeps sha256's state after them (about 100
// bytes) instead of the release's values and hooks, which a memoized
// release would otherwise hold for as long as it is memoized.
type digester struct{ state []byte }

// newDigester hashes o's encoding up to its closing brace.
func newDigester(o observation) (digester, error) {
	o.OCIDigest = ""
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(o); err != nil {
		return digester{}, err
	}
	b := buf.Bytes()
	if !bytes.HasSuffix(b, []byte("}\n")) {
		return digester{}, fmt.Errorf("unexpected encoding of the observation: ends in %q", b[max(0, len(b)-2):])
	}
	h := sha256.New()
	h.Write(b[:len(b)-2])
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
