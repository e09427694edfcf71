package scale

import (
	"context"
	"fmt"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/internal/release"
	"github.com/templatedrift/template-drift-controller/internal/testenv"
)

// helmChartGVK is source-controller's HelmChart, which the benchmark
// writes itself (status included) in place of source-controller.
var helmChartGVK = schema.GroupVersionKind{Group: "source.toolkit.fluxcd.io", Version: "v1", Kind: "HelmChart"}

// emptyValuesDigest is the digest helm-controller computes for a
// HelmRelease without values (fluxcd/pkg/chartutil.DigestValues hashes
// nothing for empty values): the sha256 of no bytes. A snapshot's
// configDigest must equal it, or helm-controller finds the release's
// values changed and upgrades it.
const emptyValuesDigest = "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// newHelmChart returns the HelmChart of a release in ns, named like the
// HelmRelease, as a user would write it for spec.chartRef.
func newHelmChart(ns string) *unstructured.Unstructured {
	hc := &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{
			"chart": chartName, "version": chartVersion, "interval": "10m", "reconcileStrategy": "ChartVersion",
			"sourceRef": map[string]any{"kind": "HelmRepository", "name": "charts"},
		},
	}}
	hc.SetGroupVersionKind(helmChartGVK)
	hc.SetNamespace(ns)
	hc.SetName(releaseName)
	return hc
}

// helmChartStatus is the status source-controller gives a HelmChart it
// has fetched: Ready for its generation, with an artifact at s's URL whose
// revision is the chart's version, as for a chart from a HelmRepository.
func helmChartStatus(s *ChartServer, ns string, generation int64, now metav1.Time) map[string]any {
	at := now.UTC().Format("2006-01-02T15:04:05Z")
	msg := fmt.Sprintf("pulled '%s' chart with version '%s'", chartName, chartVersion)
	cond := func(typ, reason, message string) map[string]any {
		return map[string]any{"type": typ, "status": "True", "reason": reason, "message": message,
			"observedGeneration": generation, "lastTransitionTime": at}
	}
	return map[string]any{
		"observedGeneration": generation,
		"observedChartName":  chartName,
		"url":                s.URL,
		"artifact": map[string]any{
			"path": fmt.Sprintf("helmchart/%s/%s/%s", ns, releaseName, chartFile), "url": s.URL,
			"revision": chartVersion, "digest": s.Digest, "size": s.Size, "lastUpdateTime": at,
		},
		"conditions": []any{
			cond("Ready", "ChartPullSucceeded", msg),
			cond("ArtifactInStorage", "Succeeded", "stored artifact: revision '"+chartVersion+"'"),
		},
	}
}

// createHelmChart creates the HelmChart of the release in ns and writes
// its status through the status subresource.
func createHelmChart(ctx context.Context, c client.Client, s *ChartServer, ns string) error {
	hc := newHelmChart(ns)
	if err := c.Create(ctx, hc); err != nil {
		return fmt.Errorf("failed to create HelmChart %s/%s: %w", ns, releaseName, err)
	}
	if err := unstructured.SetNestedField(hc.Object, helmChartStatus(s, ns, hc.GetGeneration(), metav1.Now()), "status"); err != nil {
		return err
	}
	if err := c.Status().Update(ctx, hc); err != nil {
		return fmt.Errorf("failed to write the status of HelmChart %s/%s: %w", ns, releaseName, err)
	}
	return nil
}

// toHelmChart turns hr, as NewHelmRelease returns it, into the
// HelmRelease of a helm-controller run: its chart from the HelmChart of
// the same name (spec.chartRef), and helm-controller's finalizer, which
// it adds on its first pass.
func toHelmChart(hr *helmv2.HelmRelease) {
	hr.Spec.Chart = nil
	hr.Spec.ChartRef = &helmv2.CrossNamespaceSourceReference{Kind: helmChartGVK.Kind, Name: releaseName}
	hr.Finalizers = append(hr.Finalizers, helmv2.HelmReleaseFinalizer)
}

// helmControllerStatus is the status helm-controller leaves on hr after
// it installed rel from the fleet's chart without values, at hr's
// generation: the snapshot with the release's digest and the digest of no
// values, what it last attempted, and Ready and Released as an install
// sets them.
func helmControllerStatus(hr *helmv2.HelmRelease, rel testenv.Release) helmv2.HelmReleaseStatus {
	r := rel.HelmRelease()
	snap := &helmv2.Snapshot{
		APIVersion: helmv2.CurrentSnapshotAPIVersion,
		Name:       rel.Name, Namespace: rel.Namespace, Version: rel.Version, Status: rel.Status,
		Digest:    release.SnapshotDigest(r),
		ChartName: chartName, ChartVersion: chartVersion, ConfigDigest: emptyValuesDigest,
		FirstDeployed: metav1.NewTime(r.Info.FirstDeployed), LastDeployed: metav1.NewTime(r.Info.LastDeployed),
		Action: helmv2.ReleaseActionInstall,
	}
	msg := fmt.Sprintf("Helm install succeeded for release %s with chart %s", snap.FullReleaseName(), snap.VersionedChartName())
	cond := func(typ string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: metav1.ConditionTrue, Reason: helmv2.InstallSucceededReason, Message: msg,
			ObservedGeneration: hr.Generation, LastTransitionTime: snap.LastDeployed}
	}
	return helmv2.HelmReleaseStatus{
		ObservedGeneration:         hr.Generation,
		LastAttemptedGeneration:    hr.Generation,
		LastAttemptedRevision:      chartVersion,
		LastAttemptedConfigDigest:  emptyValuesDigest,
		LastAttemptedReleaseAction: helmv2.ReleaseActionInstall,
		StorageNamespace:           rel.Namespace,
		History:                    helmv2.Snapshots{snap},
		Conditions:                 []metav1.Condition{cond("Ready"), cond(helmv2.ReleasedCondition)},
	}
}

// installForHelmController records rel on hr as helm-controller does
// after an install, then turns drift detection on in warn mode, as an
// operator would: the spec change is a new generation, which
// helm-controller reconciles by finding the release up to date and only
// diffing it against the cluster.
func installForHelmController(ctx context.Context, c client.Client, hr *helmv2.HelmRelease, rel testenv.Release) error {
	base := hr.DeepCopy()
	hr.Status = helmControllerStatus(hr, rel)
	if err := c.Status().Patch(ctx, hr, client.MergeFrom(base)); err != nil {
		return fmt.Errorf("failed to write the status of HelmRelease %s/%s: %w", hr.Namespace, hr.Name, err)
	}
	base = hr.DeepCopy()
	hr.Spec.DriftDetection = &helmv2.DriftDetection{Mode: helmv2.DriftDetectionWarn}
	if err := c.Patch(ctx, hr, client.MergeFrom(base)); err != nil {
		return fmt.Errorf("failed to set driftDetection.mode warn on HelmRelease %s/%s: %w", hr.Namespace, hr.Name, err)
	}
	return nil
}
