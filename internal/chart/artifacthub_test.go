package chart_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"

	. "github.com/onsi/gomega"
)

// The Artifact Hub annotations of Chart.yaml
// (https://artifacthub.io/docs/topics/annotations/helm/).
const (
	artifactHubImages   = "artifacthub.io/images"
	artifactHubLinks    = "artifacthub.io/links"
	artifactHubLicense  = "artifacthub.io/license"
	artifactHubCategory = "artifacthub.io/category"
)

// artifactHubCategories are the categories Artifact Hub knows.
var artifactHubCategories = []string{"ai-machine-learning", "database", "integration-delivery", "monitoring-logging",
	"networking", "security", "storage", "streaming-messaging"}

// repoBlobURL is how a link names a file of this repository.
var repoBlobURL = regexp.MustCompile(`^https://github\.com/templatedrift/template-drift-controller/blob/main/(.+)$`)

// TestArtifactHubImages: artifacthub.io/images lists the one image the
// chart deploys with its default values (image.repository, tagged
// appVersion), for the platforms `make image` builds. A release that sets
// appVersion must set the annotation's tag too: this test fails, and says
// to what, until it does.
func TestArtifactHubImages(t *testing.T) {
	g := NewWithT(t)
	ch := loadChart(t)
	var images []struct {
		Name      string   `json:"name"`
		Image     string   `json:"image"`
		Platforms []string `json:"platforms"`
	}
	g.Expect(yaml.UnmarshalStrict([]byte(ch.Metadata.Annotations[artifactHubImages]), &images)).To(Succeed())
	g.Expect(images).To(HaveLen(1), "the controller's image, which the test Pod runs too")

	_, objs := mustRender(t, "")
	deps := ofKind(objs, "Deployment")
	g.Expect(deps).To(HaveLen(1))
	deployed := fromUnstructured[appsv1.Deployment](g, deps[0]).Spec.Template.Spec.Containers[0].Image
	g.Expect(images[0].Name).To(Equal(ch.Metadata.Name))
	g.Expect(images[0].Image).To(Equal(deployed),
		"Chart.yaml's %s lists another image than the chart deploys with appVersion %s: set its image to %s",
		artifactHubImages, ch.Metadata.AppVersion, deployed)

	makefile, err := os.ReadFile(repoPath(t, "Makefile"))
	g.Expect(err).NotTo(HaveOccurred())
	m := regexp.MustCompile(`(?m)^IMAGE_PLATFORMS \?= (.+)$`).FindSubmatch(makefile)
	g.Expect(m).NotTo(BeNil(), "the Makefile sets IMAGE_PLATFORMS")
	g.Expect(images[0].Platforms).To(ConsistOf(strings.Fields(string(m[1]))), "the platforms `make image` builds")
}

// TestArtifactHubMetadata: the other Artifact Hub annotations say what is
// true: the license is the LICENSE file's, the category is one Artifact Hub
// knows, and every link to this repository's files names a file that
// exists.
func TestArtifactHubMetadata(t *testing.T) {
	g := NewWithT(t)
	annotations := loadChart(t).Metadata.Annotations

	g.Expect(annotations).To(HaveKeyWithValue(artifactHubLicense, "Apache-2.0"))
	license, err := os.ReadFile(repoPath(t, "LICENSE"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(license)).To(ContainSubstring("Apache License\n                           Version 2.0, January 2004"))

	g.Expect(artifactHubCategories).To(ContainElement(annotations[artifactHubCategory]))

	var links []struct {
		Name string `json:"name"`
		URL  string `json:"url"`
	}
	g.Expect(yaml.UnmarshalStrict([]byte(annotations[artifactHubLinks]), &links)).To(Succeed())
	g.Expect(links).NotTo(BeEmpty())
	for _, l := range links {
		g.Expect(l.Name).NotTo(BeEmpty())
		g.Expect(l.URL).To(HavePrefix("https://github.com/templatedrift/template-drift-controller/"))
		if m := repoBlobURL.FindStringSubmatch(l.URL); m != nil {
			g.Expect(repoPath(t, m[1])).To(BeAnExistingFile(), "link %s", l.Name)
		}
	}
}
