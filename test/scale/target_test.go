package scale

import (
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
)

func TestAddonTarget(t *testing.T) {
	g := NewWithT(t)
	cfg, err := ConfigFromEnv(func(string) string { return "" })
	g.Expect(err).NotTo(HaveOccurred())

	got := AddonTarget(cfg, "/bin/tdc")

	g.Expect(got.IsHelmController()).To(BeFalse())
	g.Expect(got.User).To(Equal(ControllerUser))
	g.Expect(got.MetricsController).To(Equal("template-drift-controller"))
	g.Expect(got.Flags).To(Equal(ControllerFlags(cfg)))
	g.Expect(got.CRDDirs).To(BeEmpty(), "the add-on's fleet and control plane are unchanged")
	g.Expect(Target{Name: HelmController}.IsHelmController()).To(BeTrue())
}

func TestHelmControllerTargetNamesTheMissingBuild(t *testing.T) {
	g := NewWithT(t)
	root := t.TempDir()
	writeVersions(t, root, "HELM_CONTROLLER_VERSION=v1.6.4\nFLUX_SOURCE_CONTROLLER_VERSION=v1.9.5\n")

	_, err := HelmControllerTarget(Config{}, root)

	g.Expect(err).To(MatchError(ContainSubstring("make helm-controller-bin")))
}

// writeVersions writes root/hack/versions.env.
func writeVersions(t *testing.T, root, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(root, "hack"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "hack", "versions.env"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
