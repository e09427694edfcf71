// Package render renders a HelmRelease's chart the way helm-controller v1.6
// renders an upgrade, so that a preview can compare what an upgrade would
// apply with what is live. It gathers and writes nothing: Helm's upgrade
// action runs in its server dry-run mode, which reads the target
// (discovery, the release storage, the chart's lookups) and returns the
// release before anything is applied or stored.
//
// It holds the values composition (Values, with fluxcd/pkg/chartutil as
// helm-controller uses it), helm-controller's post-renderers (PostRenderer:
// kustomize patches and images, common metadata, origin labels), and the
// render itself (Render).
package render
