package scale

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"testing"

	. "github.com/onsi/gomega"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
)

func TestChartArchiveLoadsAsTheStoredReleasesChart(t *testing.T) {
	g := NewWithT(t)

	archive, err := chartArchive()

	g.Expect(err).NotTo(HaveOccurred())
	ch, err := loader.LoadArchive(bytes.NewReader(archive))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ch.Metadata.Name).To(Equal("cluster"), "testenv.Release stores chart cluster@1.0.0")
	g.Expect(ch.Metadata.Version).To(Equal("1.0.0"))
	again, err := chartArchive()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(sha256Digest(again)).To(Equal(sha256Digest(archive)), "the same digest on every run")
}

func TestEmptyValuesDigestIsTheDigestOfNothing(t *testing.T) {
	g := NewWithT(t)
	sum := sha256.Sum256(nil)

	g.Expect(emptyValuesDigest).To(Equal("sha256:" + hex.EncodeToString(sum[:])))
	g.Expect(sha256Digest(nil)).To(Equal(emptyValuesDigest))
}

func TestServeChart(t *testing.T) {
	g := NewWithT(t)
	s, err := ServeChart()
	g.Expect(err).NotTo(HaveOccurred())
	defer s.Close()

	resp, err := http.Get(s.URL)

	g.Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(resp.StatusCode).To(Equal(http.StatusOK))
	g.Expect(s.URL).To(HavePrefix("http://127.0.0.1:"))
	g.Expect(sha256Digest(body)).To(Equal(s.Digest))
	g.Expect(int64(len(body))).To(Equal(s.Size))
	var none *ChartServer
	none.Close()
}
