package main

import (
	"encoding/json"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
	. "github.com/onsi/gomega"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	helmregistry "helm.sh/helm/v4/pkg/registry"

	"github.com/templatedrift/template-drift-controller/internal/version"
)

const chartDir = "../../charts/template-drift-controller"

// TestVersionsAgree fails when the versions a release names disagree: the
// chart's version and appVersion (the image tag it pulls by default), the
// newest released section of the CHANGELOG, the version a build without
// -ldflags says (--version), and the image config/manager pulls.
func TestVersionsAgree(t *testing.T) {
	g := NewWithT(t)
	ch, err := loader.LoadDir(chartDir)
	g.Expect(err).NotTo(HaveOccurred())
	changelog, err := os.ReadFile("../../CHANGELOG.md")
	g.Expect(err).NotTo(HaveOccurred())
	newest := regexp.MustCompile(`(?m)^## v(\d+\.\d+\.\d+) - \d{4}-\d{2}-\d{2}$`).FindSubmatch(changelog)
	g.Expect(newest).NotTo(BeNil(), "CHANGELOG.md has a released section ## vX.Y.Z - YYYY-MM-DD")
	manager, err := os.ReadFile("../../config/manager/manager.yaml")
	g.Expect(err).NotTo(HaveOccurred())

	want := string(newest[1])
	g.Expect(ch.Metadata.Version).To(Equal(want), "Chart.yaml version")
	g.Expect(ch.Metadata.AppVersion).To(Equal(want), "Chart.yaml appVersion")
	g.Expect(version.Version).To(Equal(want), "internal/version's default")
	g.Expect(string(manager)).To(ContainSubstring("image: "+controllerImage+":"+want+"\n"), "config/manager's image")
}

// TestPackageChartIsReproducible packages the chart twice, at two times,
// and gets the same bytes: the epoch is every file's time.
func TestPackageChartIsReproducible(t *testing.T) {
	g := NewWithT(t)
	a, err := packageChart(chartDir, t.TempDir(), 1780000000)
	g.Expect(err).NotTo(HaveOccurred())
	b, err := packageChart(chartDir, t.TempDir(), 1780000000)
	g.Expect(err).NotTo(HaveOccurred())
	da, _ := os.ReadFile(a)
	db, _ := os.ReadFile(b)
	g.Expect(da).To(Equal(db))
	ch, err := loader.LoadFile(a)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ch.Schema).NotTo(BeEmpty(), "the schema is packaged")
	g.Expect(filepath.Base(a)).To(Equal("template-drift-controller-" + ch.Metadata.Version + ".tgz"))
}

// TestWriteInstall pins the controller's image by digest, and refuses an
// image that is not.
func TestWriteInstall(t *testing.T) {
	g := NewWithT(t)
	out := filepath.Join(t.TempDir(), "install.yaml")
	image := "registry.example.com/tdc@sha256:" + strings.Repeat("ab", 32)
	g.Expect(writeInstall("../../config/default", image, "9.9.9", out)).To(Succeed())
	data, err := os.ReadFile(out)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(data)).To(HavePrefix("# template-drift-controller 9.9.9:"))
	g.Expect(string(data)).To(ContainSubstring("image: " + image + "\n"))
	g.Expect(string(data)).To(ContainSubstring("kind: ClusterRole\n"))
	g.Expect(string(data)).To(ContainSubstring("namespace: flux-system\n"))

	g.Expect(writeInstall("../../config/default", "registry.example.com/tdc:1.0.0", "9.9.9", out)).
		To(MatchError(ContainSubstring("not pinned by digest")))
}

// TestPushChart pushes the packaged chart to a registry on 127.0.0.1 and
// reads it back as Flux's source-controller and `helm pull` do: a Helm
// chart manifest whose chart layer is the package, and the same digest on
// a second push of the same package.
func TestPushChart(t *testing.T) {
	g := NewWithT(t)
	t.Setenv("HELM_REGISTRY_CONFIG", filepath.Join(t.TempDir(), "config.json"))
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	pkg, err := packageChart(chartDir, t.TempDir(), 1780000000)
	g.Expect(err).NotTo(HaveOccurred())

	o := pushOptions{chart: pkg, repository: "oci://" + host + "/charts", plainHTTP: true, epoch: 1780000000}
	ref, digest, err := pushChart(o)
	g.Expect(err).NotTo(HaveOccurred())
	ch, _ := loader.LoadFile(pkg)
	g.Expect(ref).To(Equal(host + "/charts/template-drift-controller:" + ch.Metadata.Version))
	_, again, err := pushChart(o)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(again).To(Equal(digest), "one package, one manifest")

	client, err := helmregistry.NewClient(helmregistry.ClientOptPlainHTTP())
	g.Expect(err).NotTo(HaveOccurred())
	pulled, err := client.Pull(ref)
	g.Expect(err).NotTo(HaveOccurred())
	data, _ := os.ReadFile(pkg)
	g.Expect(pulled.Chart.Data).To(Equal(data))
	var meta map[string]any
	g.Expect(json.Unmarshal(pulled.Config.Data, &meta)).To(Succeed())
	g.Expect(meta).To(HaveKeyWithValue("appVersion", ch.Metadata.AppVersion))
	g.Expect(pulled.Manifest.Digest).To(Equal(digest))
}
