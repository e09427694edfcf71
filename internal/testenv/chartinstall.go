package testenv

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/kube"
	"helm.sh/helm/v4/pkg/release/common"
	helmv1 "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage"
	"helm.sh/helm/v4/pkg/storage/driver"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/templatedrift/template-drift-controller/internal/render"
)

// ClusterChartDir is the e2e suite's cluster chart, below the repository
// root: the fixture chart with real templates, values and name hashes.
var ClusterChartDir = filepath.Join("e2e", "testdata", "charts", "cluster")

// ClusterChartImageURL is the cluster chart's default imageURL value.
const ClusterChartImageURL = "http://192.168.100.2/images/ubuntu.qcow2"

// InstallClusterChart installs the e2e cluster chart with its default
// values in namespace as helm-controller leaves an install: the HelmRelease
// "cluster" (spec.chart naming version 1.0.0), a deployed release applied
// with applyMethod whose chart is the real chart and whose manifest is its
// render (internal/render, as helm-controller's upgrade renders it), and
// the manifest's objects live with Helm's ownership metadata. Tests only:
// it writes a Helm release Secret.
func InstallClusterChart(ctx context.Context, e *Env, namespace, applyMethod string) (*helmv2.HelmRelease, error) {
	return InstallClusterChartWith(ctx, e, namespace, applyMethod, nil)
}

// InstallClusterChartWith is InstallClusterChart with values as the
// HelmRelease's spec.values (nil for the chart's defaults), for example
// {"workerPools": 3} for a release of about 20 objects.
func InstallClusterChartWith(ctx context.Context, e *Env, namespace, applyMethod string, values map[string]any) (*helmv2.HelmRelease, error) {
	if values == nil {
		values = map[string]any{}
	}
	raw, err := json.Marshal(values)
	if err != nil {
		return nil, fmt.Errorf("failed to encode the values: %w", err)
	}
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	chart, err := loader.Load(filepath.Join(root, ClusterChartDir))
	if err != nil {
		return nil, fmt.Errorf("failed to load the cluster chart: %w", err)
	}
	hr := NewHelmRelease(namespace, "cluster", nil)
	hr.Spec.Chart.Spec.Version = chart.Metadata.Version
	hr.Spec.ReleaseName = "cluster"
	hr.Spec.Values = &apiextensionsv1.JSON{Raw: raw}
	cs, err := kubernetes.NewForConfig(e.Config)
	if err != nil {
		return nil, fmt.Errorf("failed to create clientset: %w", err)
	}
	// Helm renders an upgrade from a release: store one, render, then give
	// it the rendered manifest.
	store := storage.Init(driver.NewSecrets(cs.CoreV1().Secrets(namespace)))
	now := time.Now()
	rel := &helmv1.Release{Name: "cluster", Namespace: namespace, Version: 1, Chart: chart, Config: values,
		Info: &helmv1.Info{Status: common.StatusDeployed, FirstDeployed: now, LastDeployed: now}, ApplyMethod: applyMethod}
	if err := store.Create(rel); err != nil {
		return nil, fmt.Errorf("failed to store the release: %w", err)
	}
	out, err := render.Render(ctx, render.Request{HelmRelease: hr, Chart: chart, Values: values, Target: e.Config})
	if err != nil {
		return nil, err
	}
	rel.Manifest = out.Manifest
	if err := store.Update(rel); err != nil {
		return nil, fmt.Errorf("failed to store the release: %w", err)
	}
	create := CreateLive(ctx, e.Client, namespace, "cluster", out.Manifest, nil)
	if applyMethod == "ssa" {
		create = ApplyLive(ctx, e.Client, namespace, "cluster", out.Manifest, "helm-controller")
	}
	if create != nil {
		return nil, create
	}
	if err := e.Client.Create(ctx, hr); err != nil {
		return nil, fmt.Errorf("failed to create HelmRelease %s/cluster: %w", namespace, err)
	}
	if err := RecordRelease(ctx, e.Client, hr, rel); err != nil {
		return nil, fmt.Errorf("failed to record release 1 in HelmRelease %s/cluster: %w", namespace, err)
	}
	return hr, nil
}

// UpgradeClusterChart runs the upgrade helm-controller would run for hr, the
// HelmRelease InstallClusterChart made with values as its spec.values: Helm's
// own upgrade action, configured as helm-controller configures it
// (render.Action), for real. It returns Helm's error when the upgrade
// fails (the release is then stored as failed, as helm-controller leaves
// it), and records the new release in hr's history when it passes. Tests
// only: it writes a Helm release Secret.
func UpgradeClusterChart(ctx context.Context, e *Env, hr *helmv2.HelmRelease, values map[string]any) error {
	root, err := RepoRoot()
	if err != nil {
		return err
	}
	chart, err := loader.Load(filepath.Join(root, ClusterChartDir))
	if err != nil {
		return fmt.Errorf("failed to load the cluster chart: %w", err)
	}
	up, err := render.Action(render.Request{HelmRelease: hr, Chart: chart, Values: values, Target: e.Config})
	if err != nil {
		return err
	}
	up.DryRunStrategy = action.DryRunNone
	// As helm-controller with spec.upgrade.disableWait: nothing here makes
	// the Cluster API objects ready.
	up.WaitStrategy = kube.HookOnlyStrategy
	rel, err := up.RunWithContext(ctx, hr.Spec.ReleaseName, chart, values)
	if err != nil {
		return err
	}
	typed, ok := rel.(*helmv1.Release)
	if !ok {
		return fmt.Errorf("release %s: not a Helm v1 release", hr.Spec.ReleaseName)
	}
	return RecordRelease(ctx, e.Client, hr, typed)
}
