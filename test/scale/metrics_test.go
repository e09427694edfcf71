package scale

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
)

func TestSumCounter(t *testing.T) {
	g := NewWithT(t)
	exposition := `# HELP controller_runtime_reconcile_total Total number of reconciliations per controller
# TYPE controller_runtime_reconcile_total counter
controller_runtime_reconcile_total{controller="template-drift-controller",result="error"} 2
controller_runtime_reconcile_total{controller="template-drift-controller",result="requeue_after"} 140
controller_runtime_reconcile_total{controller="template-drift-controller",result="success"} 8 1700000000000
controller_runtime_reconcile_total{controller="other",result="success"} 1000
controller_runtime_reconcile_errors_total{controller="template-drift-controller"} 2
`

	got, err := sumCounter(strings.NewReader(exposition), reconcileTotal, `controller="template-drift-controller"`)

	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(Equal(150.0))
	_, err = sumCounter(strings.NewReader(exposition), reconcileTotal, `controller="missing"`)
	g.Expect(err).To(HaveOccurred())
}
