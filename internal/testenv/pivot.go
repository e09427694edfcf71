package testenv

import (
	"context"
	"fmt"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Pivot is the situation after `clusterctl move`: live objects rendered
// with the bootstrap values, and a `cluster` HelmRelease whose stored
// release (written as helm-controller writes it) renders the management
// values.
type Pivot struct {
	// Namespace holds the HelmRelease, the release and the objects.
	Namespace string
	// Live and Release are the chart values of the live objects and of the
	// stored release manifest.
	Live, Release ChartValues
	// ApplyMethod of the stored release ("csa", "ssa" or "").
	ApplyMethod string
	// Annotations of the HelmRelease (the add-on's opt-in).
	Annotations map[string]string
	// MutateLive edits each live object before it is created.
	MutateLive func(*unstructured.Unstructured)
}

// Install creates the namespace, the live objects, the HelmRelease
// "cluster" with its status.history, and the stored release v1.
func (p Pivot) Install(ctx context.Context, e *Env) (*helmv2.HelmRelease, error) {
	c := e.Client
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: p.Namespace}}); err != nil {
		return nil, fmt.Errorf("failed to create namespace %s: %w", p.Namespace, err)
	}
	if err := CreateLive(ctx, c, p.Namespace, "cluster", RenderClusterChart(p.Live), p.MutateLive); err != nil {
		return nil, err
	}
	hr := NewHelmRelease(p.Namespace, "cluster", p.Annotations)
	if err := c.Create(ctx, hr); err != nil {
		return nil, fmt.Errorf("failed to create HelmRelease: %w", err)
	}
	rel := Release{Name: "cluster", Namespace: p.Namespace, Version: 1, Status: "deployed",
		ApplyMethod: p.ApplyMethod, Manifest: RenderClusterChart(p.Release)}
	if err := StoreRelease(ctx, e, rel); err != nil {
		return nil, fmt.Errorf("failed to store release: %w", err)
	}
	if err := SetHistory(ctx, c, hr, rel); err != nil {
		return nil, fmt.Errorf("failed to record release history: %w", err)
	}
	return hr, nil
}

// NewHelmRelease returns a HelmRelease for the fixture chart, as a user
// would write it (spec.chart, so `flux events --for` works on it).
func NewHelmRelease(namespace, name string, annotations map[string]string) *helmv2.HelmRelease {
	return &helmv2.HelmRelease{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Annotations: annotations},
		Spec: helmv2.HelmReleaseSpec{
			Interval: metav1.Duration{Duration: time.Minute},
			Chart: &helmv2.HelmChartTemplate{Spec: helmv2.HelmChartTemplateSpec{
				Chart: "cluster", SourceRef: helmv2.CrossNamespaceObjectReference{Kind: "HelmRepository", Name: "charts"},
			}},
		},
	}
}
