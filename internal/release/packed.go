package release

import (
	"bytes"
	"compress/flate"
	"fmt"
	"io"
	"sync"
)

// A memoized release keeps its manifest compressed (flate, fastest level):
// manifests are YAML, which compresses several times, and the memo's bound
// counts the compressed bytes, so it holds several times more releases of
// a large cluster chart before one has to be read and decoded again. A
// pass inflates the manifest it reads, in microseconds beside the parse
// that follows.

// readers reuses flate's decompressors, whose window is 32 KB each.
var readers sync.Pool

// deflate compresses s.
func deflate(s string) ([]byte, error) {
	var b bytes.Buffer
	w, err := flate.NewWriter(&b, flate.BestSpeed)
	if err != nil {
		return nil, err
	}
	if _, err := io.WriteString(w, s); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// inflate decompresses what deflate made of a manifest of n bytes.
func inflate(p []byte, n int) (string, error) {
	var r io.ReadCloser
	if v, ok := readers.Get().(io.ReadCloser); ok {
		r = v
		if err := r.(flate.Resetter).Reset(bytes.NewReader(p), nil); err != nil {
			return "", err
		}
	} else {
		r = flate.NewReader(bytes.NewReader(p))
	}
	defer readers.Put(r)
	var b bytes.Buffer
	b.Grow(n)
	if _, err := io.Copy(&b, r); err != nil {
		return "", err
	}
	return b.String(), nil
}

// pack moves e's manifest into e.manifest, compressed.
func (e *memoEntry) pack() error {
	if e.rel == nil {
		return nil
	}
	p, err := deflate(e.rel.Manifest)
	if err != nil {
		return fmt.Errorf("failed to compress the manifest of release %s: %w", e.rel.Ref(), err)
	}
	e.manifest, e.manifestLen = p, len(e.rel.Manifest)
	rel := *e.rel
	rel.Manifest = ""
	e.rel = &rel
	return nil
}
