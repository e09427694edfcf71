package render

import (
	"context"
	"fmt"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/chartutil"
	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Values composes hr's values as helm-controller v1.6 does, with the same
// library (fluxcd/pkg/chartutil): each spec.valuesFrom ConfigMap or Secret
// of hr's namespace in order, at its targetPath or merged at the top, a
// missing one skipped only when marked optional, then spec.values merged
// over them. c reads the references; a reference that cannot be read is an
// error that names it.
func Values(ctx context.Context, log logr.Logger, c client.Client, hr *helmv2.HelmRelease) (map[string]any, error) {
	vals, err := chartutil.ChartValuesFromReferences(ctx, log, c, hr.Namespace, hr.GetValues(), hr.Spec.ValuesFrom...)
	if err != nil {
		return nil, fmt.Errorf("failed to compose the values of HelmRelease %s/%s: %w", hr.Namespace, hr.Name, err)
	}
	return vals, nil
}
