package render

import (
	"bytes"
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/kustomize"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const rendered = `apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: Metal3MachineTemplate
metadata:
  name: mgmt-md0
  namespace: fleet
spec:
  template:
    spec:
      image: {url: "http://bootstrap/image.qcow2", checksum: "http://bootstrap/image.sha256"}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: fleet
  labels: {app: web}
spec:
  template:
    spec:
      containers:
      - name: web
        image: nginx:1.0
`

func run(t *testing.T, hr *helmv2.HelmRelease) string {
	t.Helper()
	out, err := PostRenderer(hr).Run(bytes.NewBufferString(rendered))
	if err != nil {
		t.Fatal(err)
	}
	return out.String()
}

func hrWith(spec helmv2.HelmReleaseSpec) *helmv2.HelmRelease {
	return &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Name: "cluster", Namespace: "fleet"}, Spec: spec}
}

func TestPostRendererAddsOriginLabels(t *testing.T) {
	g := NewWithT(t)
	out := run(t, hrWith(helmv2.HelmReleaseSpec{}))
	g.Expect(out).To(ContainSubstring("helm.toolkit.fluxcd.io/name: cluster"))
	g.Expect(out).To(ContainSubstring("helm.toolkit.fluxcd.io/namespace: fleet"))
	g.Expect(bytes.Count([]byte(out), []byte("helm.toolkit.fluxcd.io/name: cluster"))).To(Equal(2), "on every object")
	g.Expect(out).To(ContainSubstring("app: web"), "existing labels stay")
	g.Expect(out).NotTo(ContainSubstring("helm.toolkit.fluxcd.io/name: cluster\n        app"), "only metadata.labels: not the pod template")
}

func TestPostRendererKustomize(t *testing.T) {
	g := NewWithT(t)
	out := run(t, hrWith(helmv2.HelmReleaseSpec{PostRenderers: []helmv2.PostRenderer{{Kustomize: &helmv2.Kustomize{
		Patches: []kustomize.Patch{{
			Target: &kustomize.Selector{Kind: "Metal3MachineTemplate", Name: "mgmt-md0"},
			Patch:  `[{"op": "replace", "path": "/spec/template/spec/image/url", "value": "http://mgmt/image.qcow2"}]`,
		}},
		Images: []kustomize.Image{{Name: "nginx", NewTag: "1.1"}},
	}}}}))
	g.Expect(out).To(ContainSubstring("url: http://mgmt/image.qcow2"))
	g.Expect(out).To(ContainSubstring("checksum: http://bootstrap/image.sha256"), "the patch changes only its path")
	g.Expect(out).To(ContainSubstring("image: nginx:1.1"))
	g.Expect(out).To(ContainSubstring("helm.toolkit.fluxcd.io/name: cluster"), "origin labels after the patches")
}

func TestPostRendererCommonMetadata(t *testing.T) {
	g := NewWithT(t)
	out := run(t, hrWith(helmv2.HelmReleaseSpec{CommonMetadata: &helmv2.CommonMetadata{
		Labels: map[string]string{"team": "infra"}, Annotations: map[string]string{"owner": "platform"},
	}}))
	g.Expect(bytes.Count([]byte(out), []byte("team: infra"))).To(Equal(2))
	g.Expect(bytes.Count([]byte(out), []byte("owner: platform"))).To(Equal(2))
}

func TestPostRendererRefusesABadPatch(t *testing.T) {
	g := NewWithT(t)
	_, err := PostRenderer(hrWith(helmv2.HelmReleaseSpec{PostRenderers: []helmv2.PostRenderer{{Kustomize: &helmv2.Kustomize{
		Patches: []kustomize.Patch{{Target: &kustomize.Selector{Kind: "Metal3MachineTemplate"},
			Patch: `[{"op": "replace", "path": "/spec/nothing/here", "value": 1}]`}},
	}}}})).Run(bytes.NewBufferString(rendered))
	g.Expect(err).To(MatchError(ContainSubstring("kustomize post-renderer")))
}
