package controllers

import (
	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
)

// TrimHelmRelease is the transform of the manager's cache: it drops every
// object's managedFields and, of a HelmRelease, the fields no pass reads
// that can be large: spec.values (a cluster chart's values are the whole
// cluster's description, often tens of KB) and spec.postRenderers (Kustomize
// patches). A pass reads a HelmRelease's metadata, the spec fields that
// name its release, storage, identity, drift detection and suspension, and
// its status; the condition it writes is a merge patch of the status,
// computed from the cached object, so nothing dropped is ever written
// back. What renders a chart (preview) reads HelmReleases live.
func TrimHelmRelease() toolscache.TransformFunc {
	return func(in any) (any, error) {
		if o, ok := in.(metav1.Object); ok {
			o.SetManagedFields(nil)
		}
		if hr, ok := in.(*helmv2.HelmRelease); ok {
			hr.Spec.Values = nil
			hr.Spec.PostRenderers = nil
		}
		return in, nil
	}
}
