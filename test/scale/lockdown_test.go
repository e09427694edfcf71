package scale

import (
	"testing"

	. "github.com/onsi/gomega"

	"github.com/templatedrift/template-drift-controller/internal/testenv"
)

// TestLockdownRole: the role the benchmark's lockdown variant and the
// chaos matrix's tenants scenario run the controller with is the chart's
// with defaultServiceAccount set: no Secret access, and no writes to any
// kind but HelmRelease status and events.
func TestLockdownRole(t *testing.T) {
	g := NewWithT(t)
	root, err := testenv.RepoRoot()
	g.Expect(err).NotTo(HaveOccurred())
	role, err := LockdownRole(root)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(role.Rules).NotTo(BeEmpty())
	writes := map[string]bool{"create": true, "update": true, "patch": true, "delete": true, "deletecollection": true}
	for _, r := range role.Rules {
		g.Expect(r.Resources).NotTo(ContainElement("secrets"), "the lockdown role grants no Secret access")
		for _, v := range r.Verbs {
			if writes[v] {
				g.Expect(r.Resources).To(Or(ContainElement("helmreleases/status"), ContainElement("events")), "%v may write only status and events", r)
			}
		}
	}
}
