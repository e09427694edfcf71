package chart_test

import (
	"testing"

	"helm.sh/helm/v4/pkg/chart/v2/lint"
	"helm.sh/helm/v4/pkg/chart/v2/lint/support"

	. "github.com/onsi/gomega"
)

// TestLint runs what `helm lint --strict` runs (Chart.yaml, values against
// the schema, strict template rendering, YAML and deprecated APIs), with the
// default values and with every optional part switched on, and allows no
// warning or error.
func TestLint(t *testing.T) {
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			res := lint.RunAll(chartDir(t), readValues(t, tc.values), namespace, lint.WithKubeVersion(kubeVersion(t)))
			var problems []string
			for _, m := range res.Messages {
				t.Log(m.Error())
				if m.Severity >= support.WarningSev {
					problems = append(problems, m.Error())
				}
			}
			g.Expect(problems).To(BeEmpty())
		})
	}
}
