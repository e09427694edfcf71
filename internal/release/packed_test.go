package release

import (
	"strings"
	"sync"
	"testing"

	. "github.com/onsi/gomega"
)

// TestPackedManifest: a memoized release keeps its manifest compressed,
// its cost counts the compressed bytes (a cluster chart's YAML compresses
// several times, so the memo holds several times more releases), every
// result is the whole manifest again, concurrently too, and an empty
// manifest stays empty.
func TestPackedManifest(t *testing.T) {
	g := NewWithT(t)
	var b strings.Builder
	for i := range 400 {
		b.WriteString("---\napiVersion: infrastructure.cluster.x-k8s.io/v1beta1\nkind: Metal3MachineTemplate\nmetadata:\n  name: md")
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString("\nspec:\n  template:\n    spec:\n      image:\n        url: http://mgmt/img.qcow2\n")
	}
	manifest := b.String()
	e := &memoEntry{key: memoKey{source: "local", namespace: "capi", name: "sh.helm.release.v1.cluster.v1"},
		rel: &Release{Name: "cluster", Namespace: "capi", Version: 1, Manifest: manifest}}
	unpacked := e.cost()
	g.Expect(e.pack()).To(Succeed())
	g.Expect(e.rel.Manifest).To(BeEmpty(), "the entry keeps the compressed manifest only")
	g.Expect(e.cost()).To(BeNumerically("<", unpacked/4), "%d bytes packed, %d unpacked", e.cost(), unpacked)

	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			got, err := e.result()
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got.Manifest).To(Equal(manifest))
			got.Manifest = "changed by the caller"
		})
	}
	wg.Wait()
	again, err := e.result()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(again.Manifest).To(Equal(manifest))

	empty := &memoEntry{rel: &Release{Name: "empty", Version: 1}}
	g.Expect(empty.pack()).To(Succeed())
	got, err := empty.result()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got.Manifest).To(BeEmpty())

	corrupt := &memoEntry{rel: &Release{Name: "broken", Namespace: "capi", Version: 2}, manifest: "\xff\x00", manifestLen: 10}
	_, err = corrupt.result()
	g.Expect(err).To(MatchError(ContainSubstring("capi/broken.v2")))
}
