// Package packed compresses the strings the controller keeps for every
// release or object it holds in memory: release manifests in the release
// memo and the read cache's compact objects. At thousands of releases they
// are most of what stays in memory, JSON and YAML compress about twice
// (a small object) to several times (a manifest), and a pass inflates only
// the few it reads, in microseconds.
//
// It uses flate at its fastest level: the strings are written once per
// change and read once per pass, so the compression ratio matters less
// than the time every informer event and release decode spends on it.
package packed

import (
	"bytes"
	"compress/flate"
	"fmt"
	"io"
	"strings"
	"sync"
)

// writers and readers reuse flate's compressors (about 1 MB of state each)
// and decompressors (a 32 KB window each), and buffers the compressors'
// output: allocating them per string would cost more than the string.
var writers, readers, buffers sync.Pool

// Deflate returns s compressed, as a string: a string is shared, not
// copied, by the deep copies informers and caches make. The string is
// allocated at its size: the compressor writes into a reused buffer, which
// grows by doubling, and whose slack would otherwise stay with the string.
func Deflate(s string) (string, error) {
	b, ok := buffers.Get().(*bytes.Buffer)
	if !ok {
		b = new(bytes.Buffer)
	}
	b.Reset()
	defer buffers.Put(b)
	w, ok := writers.Get().(*flate.Writer)
	if ok {
		w.Reset(b)
	} else {
		var err error
		if w, err = flate.NewWriter(b, flate.BestSpeed); err != nil {
			return "", fmt.Errorf("failed to start compressing: %w", err)
		}
	}
	defer writers.Put(w)
	if _, err := io.WriteString(w, s); err != nil {
		return "", fmt.Errorf("failed to compress: %w", err)
	}
	if err := w.Close(); err != nil {
		return "", fmt.Errorf("failed to compress: %w", err)
	}
	return b.String(), nil
}

// Inflate returns what Deflate compressed into p. n is the length of the
// original when known, which sizes the buffer it is read into, or 0.
func Inflate(p string, n int) (string, error) {
	var r io.ReadCloser
	if v, ok := readers.Get().(io.ReadCloser); ok {
		r = v
		if err := r.(flate.Resetter).Reset(strings.NewReader(p), nil); err != nil {
			return "", fmt.Errorf("failed to decompress: %w", err)
		}
	} else {
		r = flate.NewReader(strings.NewReader(p))
	}
	defer readers.Put(r)
	// bytes.Buffer reads into its own slice (io.Copy into a
	// strings.Builder would allocate a 32 KB buffer per call).
	var b bytes.Buffer
	b.Grow(n)
	if _, err := b.ReadFrom(r); err != nil {
		return "", fmt.Errorf("failed to decompress: %w", err)
	}
	return b.String(), nil
}
