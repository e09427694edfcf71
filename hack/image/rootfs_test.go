package main

import (
	"archive/tar"
	"bytes"
	"crypto/x509"
	"errors"
	"io"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

// TestCABundle checks the CA bundle: PEM that Go loads, with as many roots
// as a real trust store, and the same bytes every time.
func TestCABundle(t *testing.T) {
	g := NewWithT(t)
	certs, err := caBundle()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(bytes.Count(certs, []byte("-----BEGIN CERTIFICATE-----"))).To(BeNumerically(">=", minRoots))
	g.Expect(x509.NewCertPool().AppendCertsFromPEM(certs)).To(BeTrue())
	again, err := caBundle()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(again).To(Equal(certs))
}

// TestLayerTar checks the layer's tar stream: the files and owners the
// image needs, sorted, all at the one timestamp, and the same bytes for the
// same input.
func TestLayerTar(t *testing.T) {
	g := NewWithT(t)
	mtime := time.Unix(1780000000, 0)
	entries, err := rootFS([]byte("binary"))
	g.Expect(err).NotTo(HaveOccurred())
	data, err := layerTar(entries, mtime)
	g.Expect(err).NotTo(HaveOccurred())

	type file struct {
		mode     int64
		uid, gid int
	}
	got := map[string]file{}
	var names []string
	tr := tar.NewReader(bytes.NewReader(data))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(h.ModTime.Equal(mtime)).To(BeTrue(), h.Name)
		g.Expect(h.PAXRecords).To(BeEmpty(), h.Name)
		names = append(names, h.Name)
		got[h.Name] = file{mode: h.Mode, uid: h.Uid, gid: h.Gid}
	}
	g.Expect(names).To(BeEquivalentTo(sortedCopy(names)))
	g.Expect(got).To(HaveKeyWithValue("template-drift-controller", file{mode: 0o755}))
	g.Expect(got).To(HaveKeyWithValue("etc/passwd", file{mode: 0o644}))
	g.Expect(got).To(HaveKeyWithValue("etc/group", file{mode: 0o644}))
	g.Expect(got).To(HaveKeyWithValue("etc/ssl/certs/ca-certificates.crt", file{mode: 0o644}))
	g.Expect(got).To(HaveKeyWithValue("home/nonroot/", file{mode: 0o700, uid: nonrootUID, gid: nonrootGID}))
	g.Expect(got).To(HaveKeyWithValue("tmp/", file{mode: 0o1777}))

	again, err := layerTar(entries, mtime)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(again).To(Equal(data))
	z1, err := gzipped(data)
	g.Expect(err).NotTo(HaveOccurred())
	z2, err := gzipped(again)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(z2).To(Equal(z1))
}
