package controllers

import (
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/release"
)

// TestTrimHelmRelease: the manager's cache keeps of a HelmRelease what a
// pass reads (its metadata, the spec fields that name its release, storage
// and identity, drift detection, suspension, its status) and drops its
// values, post-renderers and managedFields; other objects lose only their
// managedFields.
func TestTrimHelmRelease(t *testing.T) {
	g := NewWithT(t)
	hr := &helmv2.HelmRelease{
		ObjectMeta: metav1.ObjectMeta{Name: "cluster", Namespace: "fleet", Generation: 3, ResourceVersion: "9",
			Annotations:   map[string]string{api.ModeAnnotation: api.ModeEnabled},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "flux"}}},
		Spec: helmv2.HelmReleaseSpec{ReleaseName: "mgmt", TargetNamespace: "capi", StorageNamespace: "flux-system",
			ServiceAccountName: "tenant", Suspend: true,
			DriftDetection: &helmv2.DriftDetection{Mode: helmv2.DriftDetectionWarn},
			Values:         &apiextensionsv1.JSON{Raw: []byte(`{"cluster":{"name":"mgmt"}}`)},
			PostRenderers:  []helmv2.PostRenderer{{Kustomize: &helmv2.Kustomize{}}}},
		Status: helmv2.HelmReleaseStatus{History: helmv2.Snapshots{{Name: "mgmt", Version: 2, Digest: "sha256:abc"}},
			Conditions: []metav1.Condition{{Type: api.TemplatesInSyncCondition, Status: metav1.ConditionTrue}}},
	}
	want := hr.DeepCopy()
	want.ManagedFields, want.Spec.Values, want.Spec.PostRenderers = nil, nil, nil

	out, err := TrimHelmRelease()(hr)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(Equal(want))
	g.Expect(release.Name(out.(*helmv2.HelmRelease))).To(Equal("mgmt"))

	other := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "x", ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m"}}}}
	out, err = TrimHelmRelease()(other)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out.(*metav1.PartialObjectMetadata).ManagedFields).To(BeEmpty())
	g.Expect(out.(*metav1.PartialObjectMetadata).Name).To(Equal("x"))
}
