package render_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/kustomize"
	. "github.com/onsi/gomega"
	chartcommon "helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/release/common"
	helmv1 "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage"
	"helm.sh/helm/v4/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/templatedrift/template-drift-controller/internal/render"
	"github.com/templatedrift/template-drift-controller/internal/testenv"
)

// shared is a control plane with the Cluster API and Metal3 kinds, and no
// managers: rendering reads discovery and objects, and writes nothing.
var shared = &testenv.Lazy{Name: "render", Options: testenv.Options{ProviderCRDs: true}}

func TestMain(m *testing.M) { os.Exit(shared.Run(m)) }

func clusterEnv(t *testing.T) *testenv.Env { return shared.Env(t) }

func clusterChart(t *testing.T) *chart.Chart {
	t.Helper()
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	c, err := loader.Load(filepath.Join(root, "e2e", "testdata", "charts", "cluster"))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestRenderAsHelmControllerUpgrades stores a deployed release of the e2e
// cluster chart, then renders upgrades of it: with the same values the
// manifest is the stored one, a values change changes only what it names
// (a template's content, not its hashed name), and a kustomize
// post-renderer patches the render. Nothing is written: the storage holds
// the one release it held, and no object of the chart exists.
func TestRenderAsHelmControllerUpgrades(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	env := clusterEnv(t)
	cs, err := kubernetes.NewForConfig(env.Config)
	g.Expect(err).NotTo(HaveOccurred())
	ns, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "render-"}}, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	ch := clusterChart(t)
	hr := &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Name: "cluster", Namespace: ns.Name}}
	name := ns.Name + "-cluster"
	hr.Spec.ReleaseName = name

	// A first release, as helm-controller's install stored it: the manifest
	// is what the upgrade with the same values renders.
	store := storage.Init(driver.NewSecrets(cs.CoreV1().Secrets(ns.Name)))
	first := &helmv1.Release{Name: name, Namespace: ns.Name, Version: 1, Chart: ch, Config: map[string]any{},
		Info: &helmv1.Info{Status: common.StatusDeployed, FirstDeployed: time.Now(), LastDeployed: time.Now()}, ApplyMethod: "csa"}
	g.Expect(store.Create(first)).To(Succeed())
	req := render.Request{HelmRelease: hr, Chart: ch, Values: map[string]any{}, Target: env.Config}
	out, err := render.Render(ctx, req)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out.Manifest).To(ContainSubstring("kind: Metal3MachineTemplate"))
	g.Expect(out.Manifest).To(ContainSubstring("helm.toolkit.fluxcd.io/name: cluster"), "the origin labels")
	g.Expect(out.Version).To(Equal(2))
	first.Manifest = out.Manifest
	g.Expect(store.Update(first)).To(Succeed())

	again, err := render.Render(ctx, req)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(again.Manifest).To(Equal(first.Manifest), "the release as it is renders the stored manifest")

	req.Values = map[string]any{"imageURL": "http://192.168.100.9/images/ubuntu.qcow2"}
	changed, err := render.Render(ctx, req)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changed.Manifest).To(ContainSubstring("http://192.168.100.9/images/ubuntu.qcow2"))
	g.Expect(templateNames(changed.Manifest)).To(Equal(templateNames(first.Manifest)), "the image URL is kept out of the names")

	hr.Spec.PostRenderers = []helmv2.PostRenderer{{Kustomize: &helmv2.Kustomize{Patches: []kustomize.Patch{{
		Target: &kustomize.Selector{Kind: "Cluster"},
		Patch:  `[{"op": "add", "path": "/metadata/annotations", "value": {"patched": "yes"}}]`,
	}}}}}
	patched, err := render.Render(ctx, req)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(patched.Manifest).To(ContainSubstring("patched: \"yes\""))

	secrets, err := cs.CoreV1().Secrets(ns.Name).List(ctx, metav1.ListOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(secrets.Items).To(HaveLen(1), "the render stored nothing")
	_, err = store.Get(name, 2)
	g.Expect(err).To(HaveOccurred(), "no second release")
}

// TestRenderRefusesWhatHelmControllerWouldNotUpgrade: no release to
// upgrade, and a chart with CRDs.
func TestRenderRefusesWhatHelmControllerWouldNotUpgrade(t *testing.T) {
	g := NewWithT(t)
	env := clusterEnv(t)
	hr := &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Name: "never-installed", Namespace: "default"}}
	_, err := render.Render(context.Background(), render.Request{HelmRelease: hr, Chart: clusterChart(t), Target: env.Config})
	g.Expect(err).To(MatchError(ContainSubstring("failed to render the upgrade of release default/never-installed")))

	withCRDs := clusterChart(t)
	withCRDs.Files = append(withCRDs.Files, &chartcommon.File{Name: "crds/thing.yaml", Data: []byte("kind: CustomResourceDefinition\n")})
	_, err = render.Render(context.Background(), render.Request{HelmRelease: hr, Chart: withCRDs, Target: env.Config})
	g.Expect(err).To(MatchError(ContainSubstring("carries CustomResourceDefinitions")))
}

// templateNames lists the Metal3MachineTemplate names of a manifest.
func templateNames(manifest string) []string {
	var out []string
	for _, doc := range strings.Split(manifest, "\n---\n") {
		if strings.Contains(doc, "kind: Metal3MachineTemplate") {
			for _, line := range strings.Split(doc, "\n") {
				if n, ok := strings.CutPrefix(strings.TrimSpace(line), "name: "); ok {
					out = append(out, n)
					break
				}
			}
		}
	}
	return out
}
