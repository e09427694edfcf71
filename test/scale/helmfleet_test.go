package scale

import (
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	. "github.com/onsi/gomega"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/release"
	"github.com/templatedrift/template-drift-controller/internal/testenv"
)

func TestHelmControllerStatusIsAnUpToDateInstall(t *testing.T) {
	g := NewWithT(t)
	hr := testenv.NewHelmRelease("fleet-0003", releaseName, nil)
	hr.Generation = 1
	rel := testenv.Release{Name: releaseName, Namespace: "fleet-0003", Version: 1, Status: "deployed", ApplyMethod: "csa", Manifest: "---\n"}

	st := helmControllerStatus(hr, rel)

	g.Expect(st.ObservedGeneration).To(Equal(int64(1)))
	g.Expect(st.LastAttemptedGeneration).To(Equal(int64(1)))
	g.Expect(st.LastAttemptedRevision).To(Equal("1.0.0"), "the chart version, as for a HelmChart source")
	g.Expect(st.LastAttemptedConfigDigest).To(Equal(emptyValuesDigest))
	g.Expect(st.StorageNamespace).To(Equal("fleet-0003"))
	g.Expect(st.History).To(HaveLen(1))
	snap := st.History.Latest()
	g.Expect(snap.Digest).To(Equal(release.SnapshotDigest(rel.HelmRelease())))
	g.Expect(snap.ConfigDigest).To(Equal(emptyValuesDigest), "helm-controller finds the values changed otherwise")
	g.Expect(snap.VersionedChartName()).To(Equal("cluster@1.0.0"))
	for _, typ := range []string{"Ready", helmv2.ReleasedCondition} {
		c := apimeta.FindStatusCondition(st.Conditions, typ)
		g.Expect(c).NotTo(BeNil(), typ)
		g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(c.Reason).To(Equal(helmv2.InstallSucceededReason))
		g.Expect(c.Message).To(Equal("Helm install succeeded for release fleet-0003/cluster.v1 with chart cluster@1.0.0"))
		g.Expect(c.ObservedGeneration).To(Equal(int64(1)))
	}
}

func TestToHelmChartKeepsTheRestOfTheRelease(t *testing.T) {
	g := NewWithT(t)
	hr := testenv.NewHelmRelease("fleet-0000", releaseName, map[string]string{api.ModeAnnotation: api.ModeEnabled})
	hr.Spec.Interval = metav1.Duration{Duration: 30 * time.Second}

	toHelmChart(hr)

	g.Expect(hr.Spec.Chart).To(BeNil(), "spec.chart and spec.chartRef are exclusive")
	g.Expect(hr.Spec.ChartRef).To(Equal(&helmv2.CrossNamespaceSourceReference{Kind: "HelmChart", Name: releaseName}))
	g.Expect(hr.Finalizers).To(ConsistOf(helmv2.HelmReleaseFinalizer))
	g.Expect(hr.Spec.Interval.Duration).To(Equal(30 * time.Second))
	g.Expect(hr.Spec.DriftDetection).To(BeNil(), "warn mode is a later spec change")
	g.Expect(hr.Annotations).To(HaveKeyWithValue(api.ModeAnnotation, api.ModeEnabled))
}

func TestHelmChartStatusIsReadyWithTheServedArtifact(t *testing.T) {
	g := NewWithT(t)
	s := &ChartServer{URL: "http://127.0.0.1:1234/cluster-1.0.0.tgz", Digest: "sha256:abc", Size: 42}
	now := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	hc := newHelmChart("fleet-0001")

	g.Expect(unstructured.SetNestedField(hc.Object, helmChartStatus(s, "fleet-0001", 1, now), "status")).To(Succeed())

	g.Expect(hc.GetKind()).To(Equal("HelmChart"))
	g.Expect(hc.GetName()).To(Equal(releaseName), "the name spec.chartRef gives")
	for field, want := range map[string]any{"url": s.URL, "revision": "1.0.0", "digest": "sha256:abc", "size": int64(42)} {
		got, _, err := unstructured.NestedFieldNoCopy(hc.Object, "status", "artifact", field)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(got).To(Equal(want), field)
	}
	gen, _, _ := unstructured.NestedInt64(hc.Object, "status", "observedGeneration")
	g.Expect(gen).To(Equal(int64(1)), "helm-controller waits for a HelmChart whose generation is not observed")
	conds, _, _ := unstructured.NestedSlice(hc.Object, "status", "conditions")
	g.Expect(conds).To(ContainElement(HaveKeyWithValue("type", "Ready")))
}
