package harness

import (
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
)

func TestAuditFlags(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()

	flags, log, err := AuditFlags(dir, MetadataPolicy)

	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(log).To(Equal(filepath.Join(dir, "audit.log")))
	g.Expect(flags).To(HaveKeyWithValue("audit-log-path", log))
	policy, err := os.ReadFile(flags["audit-policy-file"])
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(policy)).To(ContainSubstring("level: Metadata"))
}
