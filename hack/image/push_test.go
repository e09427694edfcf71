package main

import (
	"bytes"
	"io"
	"log"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	. "github.com/onsi/gomega"
)

// TestPush pushes a built layout to an in-memory registry on 127.0.0.1 and
// reads the index back: same digest, both platforms pullable.
func TestPush(t *testing.T) {
	g := NewWithT(t)
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	dir := buildLayout(t, testOptions(t))
	_, want, err := readIndex(dir)
	g.Expect(err).NotTo(HaveOccurred())

	image := strings.TrimPrefix(srv.URL, "http://") + "/templatedrift/template-drift-controller:1.2.3"
	var out bytes.Buffer
	g.Expect(push(t.Context(), dir, image, &out)).To(Succeed())
	g.Expect(out.String()).To(ContainSubstring(want.Digest.String()))

	ref, err := name.ParseReference(image)
	g.Expect(err).NotTo(HaveOccurred())
	idx, err := remote.Index(ref)
	g.Expect(err).NotTo(HaveOccurred())
	got, err := idx.Digest()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(Equal(want.Digest))
	m, err := idx.IndexManifest()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(m.Manifests).To(HaveLen(2))
	for _, d := range m.Manifests {
		img, err := idx.Image(d.Digest)
		g.Expect(err).NotTo(HaveOccurred())
		_, err = img.ConfigFile()
		g.Expect(err).NotTo(HaveOccurred(), d.Platform.String())
	}
}
