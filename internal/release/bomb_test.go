package release

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"errors"
	"testing"

	. "github.com/onsi/gomega"
)

// TestGzipBombIsRefused: a release Secret that decompresses past the bound
// is refused as too large, streaming, before Helm's driver would read it all
// into memory; a normal release passes the same check.
func TestGzipBombIsRefused(t *testing.T) {
	g := NewWithT(t)
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zeros := make([]byte, 1<<20)
	for i := 0; i < (minDecodedLimit>>20)+1; i++ {
		_, _ = zw.Write(zeros)
	}
	g.Expect(zw.Close()).To(Succeed())
	bomb := []byte(base64.StdEncoding.EncodeToString(buf.Bytes()))
	g.Expect(len(bomb)).To(BeNumerically("<", 1<<20), "fits in a Secret")

	_, err := NewReader(1<<20).Get(context.Background(), fakeSource("r", 1, bomb), "ns", "r", 1)
	g.Expect(errors.Is(err, ErrManifestTooLarge)).To(BeTrue(), "got %v", err)

	g.Expect(decodedOver(bomb, minDecodedLimit)).To(BeTrue())
	g.Expect(decodedOver(bomb, minDecodedLimit+2<<20)).To(BeFalse())
	plain := []byte(base64.StdEncoding.EncodeToString([]byte(`{"name":"r"}`)))
	g.Expect(decodedOver(plain, 12)).To(BeFalse())
	g.Expect(decodedOver(plain, 11)).To(BeTrue(), "uncompressed data is bounded too")
}
