package scale

import (
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
)

// TestAddonProcess: the add-on runs as its own user with the flags it is
// given, and its reconciles are counted under its controller's name.
func TestAddonProcess(t *testing.T) {
	g := NewWithT(t)
	cfg, err := ConfigFromEnv(func(string) string { return "" })
	g.Expect(err).NotTo(HaveOccurred())

	got := Addon{Bin: "/bin/tdc", Flags: ControllerFlags(cfg), Shards: cfg.Shards}.process()

	g.Expect(got.name).To(Equal(TemplateDriftController))
	g.Expect(got.user).To(Equal(ControllerUser))
	g.Expect(got.metricsController).To(Equal("template-drift-controller"))
	g.Expect(got.flags).To(Equal(ControllerFlags(cfg)))
	g.Expect(got.shards).To(Equal(1))
	h := helmControllerProcess("/bin/hc")
	g.Expect(h.user).To(Equal(HelmControllerUser), "the audit log tells the two apart")
	g.Expect(h.metricsController).To(Equal("helmrelease"))
	g.Expect(h.shards).To(Equal(1), "helm-controller always runs as one process")
}

func TestLocateHelmControllerNamesTheMissingBuild(t *testing.T) {
	g := NewWithT(t)
	root := t.TempDir()
	writeVersions(t, root, "HELM_CONTROLLER_VERSION=v1.6.4\nFLUX_SOURCE_CONTROLLER_VERSION=v1.9.5\n")

	_, _, err := LocateHelmController(root)

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
