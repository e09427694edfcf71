package render

import (
	"context"
	"errors"
	"fmt"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"helm.sh/helm/v4/pkg/action"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/kube"
	helmv1 "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage"
	"helm.sh/helm/v4/pkg/storage/driver"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/templatedrift/template-drift-controller/internal/plan"
	"github.com/templatedrift/template-drift-controller/internal/release"
)

// Request is one render of a HelmRelease's chart.
type Request struct {
	// HelmRelease is the HelmRelease as proposed: its release name,
	// release and storage namespaces, upgrade settings and post-renderers
	// are those of the render.
	HelmRelease *helmv2.HelmRelease
	// Chart is the chart to render: the one the stored release keeps, or
	// one given.
	Chart *chart.Chart
	// Values are the composed values (see Values).
	Values map[string]any
	// Target is the cluster the release deploys to. The render reads it
	// (discovery, Helm's storage, the objects the chart's lookups name)
	// and writes nothing.
	Target *rest.Config
	// Cluster, when set, is shared by the renders of a fleet on Target
	// (NewCluster); nil reads discovery and the OpenAPI afresh.
	Cluster *Cluster
}

// Render renders req as helm-controller v1.6's upgrade does, by running
// Helm's own upgrade action with helm-controller's settings, in Helm's
// server dry-run mode: the chart sees the target's capabilities and its
// lookups read the target, and Helm returns the release it would store
// before it applies or stores anything. It returns that release: the
// manifest, the apply method Helm would use, the chart and the values.
//
// An upgrade needs a release to upgrade: a HelmRelease that was never
// installed, or whose last release is still in progress, is an error, as it
// is for helm-controller's upgrade. CustomResourceDefinitions in the chart's
// crds/ folder, which helm-controller applies apart from the upgrade, are
// an error unless spec.upgrade.crds is Skip: their changes are not
// rendered here.
func Render(ctx context.Context, req Request) (*helmv1.Release, error) {
	hr := req.HelmRelease
	if req.Chart == nil {
		return nil, errors.New("no chart to render")
	}
	if len(req.Chart.CRDObjects()) > 0 && hr.GetUpgrade().CRDs != helmv2.Skip {
		return nil, fmt.Errorf("chart %s carries CustomResourceDefinitions (crds/), which helm-controller applies apart from the upgrade: "+
			"their changes cannot be rendered (set spec.upgrade.crds to Skip to render the rest)", req.Chart.Name())
	}
	up, err := Action(req)
	if err != nil {
		return nil, fmt.Errorf("failed to render the upgrade of release %s/%s: %w", hr.GetStorageNamespace(), release.Name(hr), err)
	}
	rel, err := up.RunWithContext(ctx, release.Name(hr), req.Chart, req.Values)
	if err != nil {
		return nil, fmt.Errorf("failed to render the upgrade of release %s/%s: %w", hr.GetStorageNamespace(), release.Name(hr), err)
	}
	typed, ok := rel.(*helmv1.Release)
	if !ok {
		return nil, fmt.Errorf("release %s: only Helm's v1 releases (chart API v2) are supported", release.Name(hr))
	}
	return typed, nil
}

// Action is Helm's upgrade action for req's release as helm-controller
// v1.6 configures it, in Helm's server dry-run mode: what Render runs.
// Tests that play helm-controller's real upgrade run it with
// DryRunStrategy set to action.DryRunNone.
func Action(req Request) (*action.Upgrade, error) {
	hr := req.HelmRelease
	cfg, err := configuration(req.Target, req.Cluster, hr.GetReleaseNamespace(), hr.GetStorageNamespace())
	if err != nil {
		return nil, err
	}
	up := upgrade(cfg, hr)
	if up.ServerSideApply == "auto" {
		// helm-controller resolves "auto" itself, as Helm would (the last
		// release's apply method), so that it can force conflicts under
		// server-side apply, which Helm does not: plan.HelmFactsOf's rule.
		last, err := cfg.Releases.Last(release.Name(hr))
		if err != nil {
			return nil, fmt.Errorf("failed to read the last release (an upgrade needs one): %w", err)
		}
		typed, ok := last.(*helmv1.Release)
		if !ok {
			return nil, fmt.Errorf("release %s: only Helm's v1 releases (chart API v2) are supported", release.Name(hr))
		}
		up.ServerSideApply = fmt.Sprint(plan.HelmFactsOf(hr, plan.ApplyMethod(typed.ApplyMethod)).ApplyMethod == plan.ApplyServerSide)
	}
	up.ForceConflicts = up.ServerSideApply == "true"
	up.ForceReplace = hr.GetUpgrade().Force && !up.ForceConflicts
	return up, nil
}

// configuration is Helm's action configuration for a release in
// releaseNamespace stored in storageNamespace on target, as helm-controller
// builds it: a kube client defaulting to the release namespace, and the
// Secrets storage driver in the storage namespace.
func configuration(target *rest.Config, shared *Cluster, releaseNamespace, storageNamespace string) (*action.Configuration, error) {
	getter, err := newRESTGetter(target, releaseNamespace, shared)
	if err != nil {
		return nil, fmt.Errorf("failed to reach the target cluster: %w", err)
	}
	cs, err := kubernetes.NewForConfig(target)
	if err != nil {
		return nil, fmt.Errorf("failed to reach the target cluster: %w", err)
	}
	kc := kube.New(getter)
	kc.Namespace = releaseNamespace
	if shared != nil {
		kc.Factory = sharedValidators{Factory: kc.Factory, cluster: shared}
	}
	cfg := action.NewConfiguration()
	cfg.RESTClientGetter = getter
	cfg.KubeClient = kc
	cfg.Releases = storage.Init(driver.NewSecrets(cs.CoreV1().Secrets(storageNamespace)))
	return cfg, nil
}

// upgrade is Helm's upgrade action with the settings helm-controller v1.6
// gives it for hr, in server dry-run mode.
func upgrade(cfg *action.Configuration, hr *helmv2.HelmRelease) *action.Upgrade {
	up := action.NewUpgrade(cfg)
	up.DryRunStrategy = action.DryRunServer
	up.Namespace = hr.GetReleaseNamespace()
	switch ssa := hr.GetUpgrade().ServerSideApply; ssa {
	case "":
		up.ServerSideApply = "auto"
	case helmv2.ServerSideApplyEnabled:
		up.ServerSideApply = "true"
	case helmv2.ServerSideApplyDisabled:
		up.ServerSideApply = "false"
	default:
		up.ServerSideApply = string(ssa)
	}
	up.ResetValues = !hr.GetUpgrade().PreserveValues
	up.ReuseValues = hr.GetUpgrade().PreserveValues
	up.TakeOwnership = !hr.GetUpgrade().DisableTakeOwnership
	up.DisableHooks = hr.GetUpgrade().DisableHooks
	up.DisableOpenAPIValidation = hr.GetUpgrade().DisableOpenAPIValidation
	up.SkipSchemaValidation = hr.GetUpgrade().DisableSchemaValidation
	up.SkipCRDs = true
	up.Devel = true
	up.PostRenderer, up.PostRenderStrategy = PostRenderer(hr), postRenderStrategy(hr)
	return up
}

// postRenderStrategy is hr's, Combined (helm-controller's default) when it
// sets none.
func postRenderStrategy(hr *helmv2.HelmRelease) action.PostRenderStrategy {
	if s := hr.Spec.PostRenderStrategy; s != "" {
		return action.PostRenderStrategy(s)
	}
	return action.PostRenderStrategyCombined
}
