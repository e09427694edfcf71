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
	"encoding/binary"
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
	return deflate(s, false)
}

// DeflateSized is Deflate with s's length in front, as a uvarint, so that
// InflateSized reads s back into a buffer of its exact size: without it a
// read grows its buffer from bytes.MinRead by doubling, and with the copy
// into a string allocated about twice what it returned (1,024 bytes
// against 513 for a 500-byte content).
func DeflateSized(s string) (string, error) {
	return deflate(s, true)
}

func deflate(s string, sized bool) (string, error) {
	b, ok := buffers.Get().(*bytes.Buffer)
	if !ok {
		b = new(bytes.Buffer)
	}
	b.Reset()
	defer buffers.Put(b)
	if sized {
		b.Write(binary.AppendUvarint(b.AvailableBuffer(), uint64(len(s))))
	}
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
	b, err := inflate(p, n)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// maxRatio bounds the length a sized string may claim: flate expands at
// most about 1,032 times, so a larger claim is corrupt, and is refused
// before a buffer of its size is allocated.
const maxRatio = 1100

// InflateSized returns what DeflateSized compressed into p, as bytes the
// caller owns: a decoder reads them without the copy a string would need.
func InflateSized(p string) ([]byte, error) {
	head := []byte(p[:min(len(p), binary.MaxVarintLen64)])
	n, k := binary.Uvarint(head)
	if k <= 0 || n > uint64(len(p))*maxRatio {
		return nil, fmt.Errorf("failed to decompress: no valid length in front")
	}
	r, err := reader(p[k:])
	if err != nil {
		return nil, err
	}
	defer readers.Put(r)
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, fmt.Errorf("failed to decompress %d bytes: %w", n, err)
	}
	var more [1]byte
	if _, err := io.ReadFull(r, more[:]); err != io.EOF {
		return nil, fmt.Errorf("failed to decompress: more than the %d bytes in front", n)
	}
	return b, nil
}

// inflate reads what p compresses into a buffer sized for n bytes.
func inflate(p string, n int) ([]byte, error) {
	r, err := reader(p)
	if err != nil {
		return nil, err
	}
	defer readers.Put(r)
	// bytes.Buffer reads into its own slice (io.Copy into a
	// strings.Builder would allocate a 32 KB buffer per call).
	var b bytes.Buffer
	b.Grow(n)
	if _, err := b.ReadFrom(r); err != nil {
		return nil, fmt.Errorf("failed to decompress: %w", err)
	}
	return b.Bytes(), nil
}

// reader returns a pooled decompressor reading p; the caller puts it back.
func reader(p string) (io.ReadCloser, error) {
	if r, ok := readers.Get().(io.ReadCloser); ok {
		if err := r.(flate.Resetter).Reset(strings.NewReader(p), nil); err != nil {
			return nil, fmt.Errorf("failed to decompress: %w", err)
		}
		return r, nil
	}
	return flate.NewReader(strings.NewReader(p)), nil
}
