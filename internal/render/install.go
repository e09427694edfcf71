package render

import (
	"context"
	"errors"
	"fmt"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"helm.sh/helm/v4/pkg/action"
	helmv1 "helm.sh/helm/v4/pkg/release/v1"

	"github.com/templatedrift/template-drift-controller/internal/release"
)

// Install renders req as helm-controller v1.6's install does, in
// Helm's server dry-run mode: the release a HelmRelease that was never
// installed would get. As for Render, CustomResourceDefinitions in the
// chart's crds/ folder are an error unless spec.install.crds is Skip.
func Install(ctx context.Context, req Request) (*helmv1.Release, error) {
	hr := req.HelmRelease
	if req.Chart == nil {
		return nil, errors.New("no chart to render")
	}
	if len(req.Chart.CRDObjects()) > 0 && hr.GetInstall().CRDs != helmv2.Skip {
		return nil, fmt.Errorf("chart %s carries CustomResourceDefinitions (crds/), which helm-controller applies apart from the install: "+
			"their changes cannot be rendered (set spec.install.crds to Skip to render the rest)", req.Chart.Name())
	}
	cfg, err := configuration(req.Target, req.Cluster, hr.GetReleaseNamespace(), hr.GetStorageNamespace())
	if err != nil {
		return nil, err
	}
	rel, err := installAction(cfg, hr).RunWithContext(ctx, req.Chart, req.Values)
	if err != nil {
		return nil, fmt.Errorf("failed to render the install of release %s/%s: %w", hr.GetStorageNamespace(), release.Name(hr), err)
	}
	typed, ok := rel.(*helmv1.Release)
	if !ok {
		return nil, fmt.Errorf("release %s: only Helm's v1 releases (chart API v2) are supported", release.Name(hr))
	}
	return typed, nil
}

// installAction is Helm's install action with the settings helm-controller v1.6
// gives it for hr, in server dry-run mode.
func installAction(cfg *action.Configuration, hr *helmv2.HelmRelease) *action.Install {
	in := action.NewInstall(cfg)
	in.DryRunStrategy = action.DryRunServer
	in.ReleaseName = release.Name(hr)
	in.Namespace = hr.GetReleaseNamespace()
	in.ServerSideApply = true
	if ssa := hr.GetInstall().ServerSideApply; ssa != nil {
		in.ServerSideApply = *ssa
	}
	in.ForceConflicts = in.ServerSideApply
	in.TakeOwnership = !hr.GetInstall().DisableTakeOwnership
	in.DisableHooks = hr.GetInstall().DisableHooks
	in.DisableOpenAPIValidation = hr.GetInstall().DisableOpenAPIValidation
	in.SkipSchemaValidation = hr.GetInstall().DisableSchemaValidation
	in.Replace = hr.GetInstall().Replace
	in.Devel = true
	in.SkipCRDs = true
	in.PostRenderer, in.PostRenderStrategy = PostRenderer(hr), postRenderStrategy(hr)
	return in
}
