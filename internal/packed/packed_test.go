package packed

import (
	"strings"
	"sync"
	"testing"

	. "github.com/onsi/gomega"
)

// TestRoundTrip: whatever is deflated inflates to the same string, with or
// without its length, and sized to the same bytes, at their exact
// capacity, concurrently (the pools are shared); the empty string stays
// empty. JSON like a template's compresses.
func TestRoundTrip(t *testing.T) {
	g := NewWithT(t)
	template := `{"metadata":{"annotations":{"meta.helm.sh/release-name":"c0001","meta.helm.sh/release-namespace":"fleet-0001"},` +
		`"labels":{"app.kubernetes.io/managed-by":"Helm"}},"spec":{"template":{"spec":{"image":{"checksum":"http://192.168.100.2/images/ubuntu.qcow2.sha256sum",` +
		`"checksumType":"sha256","format":"qcow2","url":"http://192.168.100.2/images/ubuntu.qcow2"}}}}}`
	inputs := []string{"", "x", template, strings.Repeat(template, 50), "\xff\x00 not utf-8"}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for _, in := range inputs {
				p, err := Deflate(in)
				g.Expect(err).NotTo(HaveOccurred())
				for _, n := range []int{0, len(in)} {
					out, err := Inflate(p, n)
					g.Expect(err).NotTo(HaveOccurred())
					g.Expect(out).To(Equal(in))
				}
				sized, err := DeflateSized(in)
				g.Expect(err).NotTo(HaveOccurred())
				b, err := InflateSized(sized)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(string(b)).To(Equal(in))
				g.Expect(cap(b)).To(Equal(len(in)), "read into a buffer of its size")
			}
		})
	}
	wg.Wait()
	p, err := Deflate(template)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(len(p)).To(BeNumerically("<", len(template)*3/4), "%d bytes deflated from %d", len(p), len(template))
}

// TestInflateCorrupt: what Deflate did not make is an error, not a panic
// or a partial string; so is a sized string with no length in front, a
// length flate could not expand to (refused before it is allocated), or a
// length other than what it inflates to.
func TestInflateCorrupt(t *testing.T) {
	g := NewWithT(t)
	for _, p := range []string{"\xff\x00", "{not compressed}"} {
		out, err := Inflate(p, 10)
		g.Expect(err).To(MatchError(ContainSubstring("failed to decompress")))
		g.Expect(out).To(BeEmpty())
	}
	plain, err := Deflate("abc")
	g.Expect(err).NotTo(HaveOccurred())
	sized, err := DeflateSized("abc")
	g.Expect(err).NotTo(HaveOccurred())
	for _, p := range []string{"", "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", "\xff\xff\xff\x7f" + plain, "\x05" + plain, "\x03{not compressed}", sized[:len(sized)-1]} {
		out, err := InflateSized(p)
		g.Expect(err).To(MatchError(ContainSubstring("failed to decompress")), "%q", p)
		g.Expect(out).To(BeEmpty())
	}
}

// FuzzInflate: no input makes Inflate or InflateSized panic, and what
// Inflate inflates deflates and inflates back to itself, sized or not.
func FuzzInflate(f *testing.F) {
	for _, s := range []string{"", "abc", "{\"a\":1}"} {
		p, _ := Deflate(s)
		f.Add(p)
	}
	f.Add("\xff\x00")
	f.Fuzz(func(t *testing.T, p string) {
		out, err := Inflate(p, 0)
		if err != nil {
			return
		}
		again, err := Deflate(out)
		if err != nil {
			t.Fatalf("deflate: %v", err)
		}
		back, err := Inflate(again, len(out))
		if err != nil || back != out {
			t.Fatalf("round trip of %q: %q, %v", out, back, err)
		}
		sized, err := DeflateSized(out)
		if err != nil {
			t.Fatalf("deflate sized: %v", err)
		}
		if b, err := InflateSized(sized); err != nil || string(b) != out {
			t.Fatalf("sized round trip of %q: %q, %v", out, b, err)
		}
		if b, err := InflateSized(p); err == nil && len(b) > len(p)*maxRatio {
			t.Fatalf("%d bytes from %d", len(b), len(p))
		}
	})
}

// BenchmarkDeflate: compressing a release manifest of the benchmark
// fleet's size (about 2 KB) and inflating it, with the pooled compressor
// and decompressor.
func BenchmarkDeflate(b *testing.B) {
	var m strings.Builder
	for i := range 7 {
		m.WriteString("---\n# Source: cluster/templates/m3mt.yaml\napiVersion: infrastructure.cluster.x-k8s.io/v1beta1\nkind: Metal3MachineTemplate\n")
		m.WriteString("metadata:\n  name: workers-" + strings.Repeat("x", i) + "\nspec:\n  template:\n    spec:\n      image: {url: http://192.168.100.2/images/ubuntu.qcow2, checksumType: sha256}\n")
	}
	manifest := m.String()
	b.Run("Deflate", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Deflate(manifest); err != nil {
				b.Fatal(err)
			}
		}
	})
	p, err := Deflate(manifest)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("Inflate", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Inflate(p, len(manifest)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
