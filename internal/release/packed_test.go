package release

import (
	"strings"
	"sync"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/templatedrift/template-drift-controller/internal/manifest"
)

// TestPackedManifest: a memoized release keeps its manifest prepared and
// compressed, its cost counts the compressed bytes (a cluster chart's
// manifest compresses several times, so the memo holds several times more
// releases), every result gives the manifest's objects again, concurrently
// too, an empty manifest stays empty, and a manifest that does not parse
// is kept as it is, so every read reports why.
func TestPackedManifest(t *testing.T) {
	g := NewWithT(t)
	var b strings.Builder
	for i := range 400 {
		b.WriteString("---\napiVersion: infrastructure.cluster.x-k8s.io/v1beta1\nkind: Metal3MachineTemplate\nmetadata:\n  name: md")
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString("\nspec:\n  template:\n    spec:\n      image:\n        url: http://mgmt/img.qcow2\n")
	}
	manifestText := b.String()
	e := &memoEntry{key: memoKey{source: "local", namespace: "capi", name: "sh.helm.release.v1.cluster.v1"},
		rel: &Release{Name: "cluster", Namespace: "capi", Version: 1, Manifest: manifestText}}
	unpacked := e.cost()
	g.Expect(e.pack()).To(Succeed())
	g.Expect(e.rel.Manifest).To(BeEmpty(), "the entry keeps the compressed manifest only")
	g.Expect(e.cost()).To(BeNumerically("<", unpacked/4), "%d bytes packed, %d unpacked", e.cost(), unpacked)
	want, err := manifest.Split(manifestText, "capi", 0)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(want).To(HaveLen(400))

	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			got, err := e.result()
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got.Manifest).To(BeEmpty())
			objs, err := got.Objects(0)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(objs).To(Equal(want))
			got.Prepared = "changed by the caller"
		})
	}
	wg.Wait()
	again, err := e.result()
	g.Expect(err).NotTo(HaveOccurred())
	objs, err := again.Objects(0)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(objs).To(Equal(want))
	_, err = again.Objects(len(manifestText) - 1)
	g.Expect(err).To(MatchError(manifest.ErrManifestTooLarge), "the limit is the manifest's length")
	_, err = again.Objects(len(manifestText))
	g.Expect(err).NotTo(HaveOccurred())

	empty := &memoEntry{rel: &Release{Name: "empty", Version: 1}}
	g.Expect(empty.pack()).To(Succeed())
	got, err := empty.result()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got.Manifest).To(BeEmpty())
	objs, err = got.Objects(0)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(objs).To(BeEmpty())

	invalid := &memoEntry{rel: &Release{Name: "invalid", Namespace: "capi", Version: 1, Manifest: "kind: [unclosed"}}
	g.Expect(invalid.pack()).To(Succeed())
	got, err = invalid.result()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got.Manifest).To(Equal("kind: [unclosed"), "kept as it is")
	g.Expect(got.Prepared).To(BeEmpty())
	_, err = got.Objects(0)
	g.Expect(err).To(MatchError(manifest.ErrManifestInvalid))

	corrupt := &memoEntry{rel: &Release{Name: "broken", Namespace: "capi", Version: 2}, manifest: "\xff\x00", manifestLen: 10}
	_, err = corrupt.result()
	g.Expect(err).To(MatchError(ContainSubstring("capi/broken.v2")))
}
