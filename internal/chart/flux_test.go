package chart_test

import (
	"encoding/json"
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// TestFluxInstall checks the documented Flux install (config/flux): the
// HelmRelease decodes as helm-controller's API, takes its chart from the
// OCIRepository beside it, and its values pass the chart's schema and
// render.
func TestFluxInstall(t *testing.T) {
	g := NewWithT(t)
	objs := buildKustomize(t, "config/flux")
	g.Expect(objs).To(HaveLen(2))
	repo := ofKind(objs, "OCIRepository")
	g.Expect(repo).To(HaveLen(1))
	g.Expect(repo[0].GetAPIVersion()).To(Equal("source.toolkit.fluxcd.io/v1"))
	layer, _, _ := unstructured.NestedString(repo[0].Object, "spec", "layerSelector", "mediaType")
	g.Expect(layer).To(Equal("application/vnd.cncf.helm.chart.content.v1.tar+gzip"))

	releases := ofKind(objs, helmv2.HelmReleaseKind)
	g.Expect(releases).To(HaveLen(1))
	data, err := json.Marshal(releases[0].Object)
	g.Expect(err).NotTo(HaveOccurred())
	hr := &helmv2.HelmRelease{}
	g.Expect(yaml.UnmarshalStrict(data, hr)).To(Succeed(), "helm-controller's API decodes it")
	g.Expect(hr.Spec.ChartRef).NotTo(BeNil())
	g.Expect(hr.Spec.ChartRef.Kind).To(Equal("OCIRepository"))
	g.Expect(hr.Spec.ChartRef.Name).To(Equal(repo[0].GetName()))
	g.Expect(hr.Namespace).To(Equal(repo[0].GetNamespace()))

	_, err = renderRelease(t, hr.GetValues(), hr.Spec.ReleaseName, hr.Namespace)
	g.Expect(err).NotTo(HaveOccurred(), "the values pass the chart's schema")
}
