package manifest_test

import (
	"testing"

	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/testenv"
)

// benchManifest is the cluster chart's manifest as the fleet benchmark
// renders it.
func benchManifest() string { return testenv.RenderClusterChart(testenv.ChartValues{}) }

// BenchmarkSplit reads a release's objects from its YAML manifest.
func BenchmarkSplit(b *testing.B) {
	m := benchManifest()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := manifest.Split(m, "ns", 0); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkObjects reads the same objects from the prepared form.
func BenchmarkObjects(b *testing.B) {
	p, err := manifest.Prepare(benchManifest(), "ns", 0)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Objects(); err != nil {
			b.Fatal(err)
		}
	}
}
