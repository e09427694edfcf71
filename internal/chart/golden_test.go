package chart_test

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current chart")

// goldenCases are the renders kept as snapshots.
var goldenCases = []struct {
	// name is the golden file's base name.
	name string
	// values is a values file in testdata, or "" for the chart defaults.
	values string
}{
	{name: "default"},
	{name: "extended", values: "values-extended.yaml"},
	{name: "monitoring", values: "values-monitoring.yaml"},
	{name: "preview", values: "values-preview.yaml"},
	{name: "pod", values: "values-pod.yaml"},
}

// TestGolden compares the rendered chart with testdata/<name>.golden; run
// `go test ./internal/chart/ -run TestGolden -update` after a deliberate
// change and review the diff.
func TestGolden(t *testing.T) {
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			got, _ := mustRender(t, tc.values)
			path := filepath.Join("testdata", tc.name+".golden")
			if *update {
				g.Expect(os.WriteFile(path, []byte(got), 0o644)).To(Succeed())
			}
			want, err := os.ReadFile(path)
			g.Expect(err).NotTo(HaveOccurred(), "run with -update to create it")
			g.Expect(got).To(Equal(string(want)), "rendered chart differs from %s; run with -update if intended", path)
		})
	}
}
