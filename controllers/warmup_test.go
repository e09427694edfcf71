package controllers_test

import (
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/meta"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/kubernetes"

	"github.com/templatedrift/template-drift-controller/controllers"
	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/release"
	"github.com/templatedrift/template-drift-controller/internal/target"
)

// TestReleaseWarmup: the warm-up decodes the stored release of an opted-in
// HelmRelease read as the controller, so its first pass reads no release
// Secret; it leaves out a HelmRelease that is not opted in, one that
// impersonates a service account and one on a remote cluster, whose passes
// read as before.
func TestReleaseWarmup(t *testing.T) {
	g := NewWithT(t)
	warmed := newWorld(t, scenario{annotations: enabled, live: mgmt, release: mgmt})
	notOptedIn := newWorld(t, scenario{live: mgmt, release: mgmt})
	impersonated := newWorld(t, scenario{annotations: enabled, live: mgmt, release: mgmt,
		hrMutate: func(hr *helmv2.HelmRelease) { hr.Spec.ServiceAccountName = "tenant" }})
	remote := newWorld(t, scenario{annotations: enabled, live: mgmt, release: mgmt,
		hrMutate: func(hr *helmv2.HelmRelease) {
			hr.Spec.KubeConfig = &meta.KubeConfigReference{SecretRef: &meta.SecretKeyReference{Name: "remote-kubeconfig"}}
		}})

	cs, err := kubernetes.NewForConfig(env.Config)
	g.Expect(err).NotTo(HaveOccurred())
	secrets := &secretReads{SecretsGetter: cs.CoreV1()}
	releases := release.NewReader(0)
	warm := controllers.NewReleaseWarmup(env.Client, releases, secrets,
		func(hr *helmv2.HelmRelease) string { return hr.Spec.ServiceAccountName })
	g.Expect(warm.Start(t.Context())).To(Succeed())
	g.Expect(secrets.gets.Load()).To(BeZero(), "the warm-up lists, it reads no Secret one by one")

	src := release.Source{Secrets: secrets, Meta: env.Client, Key: target.LocalKey}
	rel, err := releases.Get(t.Context(), src, warmed.ns, warmed.rel.Name, 1)
	g.Expect(err).NotTo(HaveOccurred())
	want, err := manifest.Split(warmed.rel.Manifest, rel.Namespace, 0)
	g.Expect(err).NotTo(HaveOccurred())
	got, err := rel.Objects(0)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(Equal(want), "the memo holds the release's objects")
	g.Expect(secrets.gets.Load()).To(BeZero(), "the opted-in release is memoized")

	for _, w := range []*world{notOptedIn, impersonated, remote} {
		before := secrets.gets.Load()
		_, err := releases.Get(t.Context(), src, w.ns, w.rel.Name, 1)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(secrets.gets.Load()).To(Equal(before+1), "%s was not warmed", w.ns)
	}
}
