package plan_test

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/templatedrift/template-drift-controller/internal/plan"
)

var tenHex = regexp.MustCompile(`^[0-9a-f]{10}$`)

// specInOrder builds the same spec content, inserting keys in the order given, at
// the top level and in a nested map.
func specInOrder(keys []string) map[string]any {
	spec := map[string]any{}
	nested := map[string]any{}
	values := map[string]any{"image": "http://10.0.0.1/img", "checksum": "sha256", "hostSelector": map[string]any{"role": "worker"}, "online": true, "replicas": int64(3)}
	for _, k := range keys {
		spec[k] = values[k]
		nested[k] = values[k]
	}
	spec["template"] = map[string]any{"spec": nested}
	return spec
}

func TestSpecHash(t *testing.T) {
	g := NewWithT(t)
	a := specInOrder([]string{"image", "checksum", "hostSelector", "online", "replicas"})
	b := specInOrder([]string{"replicas", "online", "hostSelector", "checksum", "image"})
	g.Expect(a).To(Equal(b), "fixture: same content")

	ha, err := plan.SpecHash(a)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ha).To(MatchRegexp(tenHex.String()))
	for range 20 { // map iteration order varies between calls
		hb, err := plan.SpecHash(b)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(hb).To(Equal(ha))
	}

	// It is the sha256 of the canonical (sorted-key) JSON, cut to 10 hex.
	sum := sha256.Sum256([]byte(`{"k":"v","z":1}`))
	h, err := plan.SpecHash(map[string]any{"z": int64(1), "k": "v"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(h).To(Equal(hex.EncodeToString(sum[:])[:10]))

	// Numbers decoded as float64 (YAML/JSON) or int64 (API server) hash alike.
	hf, err := plan.SpecHash(map[string]any{"z": float64(1), "k": "v"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(hf).To(Equal(h))
}

func TestSpecHashDistinguishesSpecs(t *testing.T) {
	base := map[string]any{"image": map[string]any{"url": "http://10.0.0.1/img"}}
	cases := []struct {
		name  string // what differs from base
		other any    // the other spec
	}{
		{name: "different value", other: map[string]any{"image": map[string]any{"url": "http://10.0.0.2/img"}}},
		{name: "extra field", other: map[string]any{"image": map[string]any{"url": "http://10.0.0.1/img", "checksum": "x"}}},
		{name: "different type", other: map[string]any{"image": map[string]any{"url": []any{"http://10.0.0.1/img"}}}},
		{name: "nil spec", other: nil},
	}
	hb, err := plan.SpecHash(base)
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			ho, err := plan.SpecHash(tc.other)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(ho).To(MatchRegexp(tenHex.String()))
			g.Expect(ho).NotTo(Equal(hb))
			nb, _ := plan.RotatedName("workers", base)
			no, _ := plan.RotatedName("workers", tc.other)
			g.Expect(no).NotTo(Equal(nb))
		})
	}
}

func TestSpecHashUnencodable(t *testing.T) {
	g := NewWithT(t)
	_, err := plan.SpecHash(map[string]any{"f": func() {}})
	g.Expect(err).To(MatchError(ContainSubstring("failed to encode spec for hashing")))
	name, err := plan.RotatedName("workers", map[string]any{"c": make(chan int)})
	g.Expect(err).To(HaveOccurred())
	g.Expect(name).To(BeEmpty())
}

func TestRotatedName(t *testing.T) {
	spec := map[string]any{"image": map[string]any{"url": "http://10.0.0.1/img"}}
	h, err := plan.SpecHash(spec)
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	cases := []struct {
		name     string // what the case proves
		base     string // the manifest's name
		wantBase string // the part before "-<hash>"
	}{{
		name:     "short base is kept whole",
		base:     "workers",
		wantBase: "workers",
	}, {
		name:     "base of exactly 242 characters is kept whole (253 in all)",
		base:     strings.Repeat("a", 242),
		wantBase: strings.Repeat("a", 242),
	}, {
		name:     "300-character base is cut to 242",
		base:     strings.Repeat("b", 300),
		wantBase: strings.Repeat("b", 242),
	}, {
		name:     "a cut ending in separators is trimmed",
		base:     strings.Repeat("c", 240) + "-." + strings.Repeat("d", 58),
		wantBase: strings.Repeat("c", 240),
	}, {
		name:     "a cut ending in a run of dashes is trimmed",
		base:     strings.Repeat("e", 200) + strings.Repeat("-", 60) + strings.Repeat("f", 40),
		wantBase: strings.Repeat("e", 200),
	}, {
		name:     "dotted subdomain base cut on a dot",
		base:     strings.Repeat("g.", 150),
		wantBase: strings.TrimSuffix(strings.Repeat("g.", 121), "."),
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			got, err := plan.RotatedName(tc.base, spec)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(Equal(tc.wantBase + "-" + h))
			g.Expect(len(got)).To(BeNumerically("<=", 253))
			cut := strings.TrimSuffix(got, "-"+h)
			g.Expect(cut).NotTo(HaveSuffix("-"))
			g.Expect(cut).NotTo(HaveSuffix("."))
			g.Expect(validation.IsDNS1123Subdomain(got)).To(BeEmpty())
		})
	}
}

func TestRotatedNameIsStable(t *testing.T) {
	g := NewWithT(t)
	spec := specInOrder([]string{"image", "checksum"})
	first, err := plan.RotatedName("workers", spec)
	g.Expect(err).NotTo(HaveOccurred())
	second, err := plan.RotatedName("workers", specInOrder([]string{"checksum", "image"}))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(second).To(Equal(first), "the caller passes the manifest name: a second rotation never grows the name")
	g.Expect(first).To(MatchRegexp(`^workers-[0-9a-f]{10}$`))

	// Passing an already-rotated name is not idempotent: it is suffixed
	// again, which is why the caller must always pass the manifest's name.
	again, err := plan.RotatedName(first, spec)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(again).To(Equal(first + strings.TrimPrefix(first, "workers")))
}
