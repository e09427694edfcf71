package apply

import (
	"context"
	"fmt"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/diff"
	"github.com/templatedrift/template-drift-controller/internal/pair"
	"github.com/templatedrift/template-drift-controller/internal/plan"
	"github.com/templatedrift/template-drift-controller/internal/release"
)

// scope carries one pass's state between its phases.
type scope struct {
	engine *Engine
	req    Request
	w      *writer
	res    *Result
	// rel and objs are valid from the start.
	rel  *release.Release
	objs pair.Objects
	// Set by prepare: the previous deployed release's objects by ID, the
	// compiled ignore rules, the live Clusters and the Helm facts.
	previous map[pair.ID]*unstructured.Unstructured
	ignorer  *diff.Ignorer
	clusters []*unstructured.Unstructured
	helm     plan.HelmFacts
	// Set by decide, per template in order: effective desired and live
	// objects, and the rotations in effect.
	desired   []*unstructured.Unstructured
	live      []*unstructured.Unstructured
	rotations []plan.Rotation
	consumers []*unstructured.Unstructured
}

func (s *scope) planRelease() plan.Release {
	return plan.Release{Name: s.rel.Name, Namespace: s.rel.Namespace, Ref: s.rel.Ref()}
}

// prepare reads what every template decision shares.
func (s *scope) prepare(ctx context.Context) error {
	hr := s.req.HelmRelease
	s.helm = helmFacts(hr, s.rel)
	s.previous = map[pair.ID]*unstructured.Unstructured{}
	src := release.Source{Secrets: s.req.Target.Secrets, Meta: s.req.Target.Client, Key: s.req.Target.Key}
	prev, err := s.engine.Releases.PreviousDeployed(ctx, src, hr.GetStorageNamespace(), s.rel.Name, s.rel.Version)
	if err == nil && prev != nil {
		if objs, err := s.engine.split(prev); err == nil {
			for _, o := range objs.Templates {
				s.previous[pair.IDOf(o)] = o
			}
		}
	}
	for _, cl := range s.objs.Clusters {
		live, err := getLive(ctx, s.req.Target.Client, cl.GroupVersionKind(), cl.GetNamespace(), cl.GetName())
		if err != nil {
			return err
		}
		if live != nil {
			s.clusters = append(s.clusters, live)
		}
	}
	return nil
}

// helmFacts says how Helm will apply the release's objects next time: the
// upgrade's spec.upgrade.serverSideApply when it is enabled or disabled, the
// stored release's apply method when it is auto (helm-controller's default).
func helmFacts(hr *helmv2.HelmRelease, rel *release.Release) plan.HelmFacts {
	method := rel.ApplyMethod
	switch hr.GetUpgrade().ServerSideApply {
	case helmv2.ServerSideApplyEnabled:
		method = "ssa"
	case helmv2.ServerSideApplyDisabled:
		method = "csa"
	}
	return plan.HelmFacts{
		ApplyMethod:           method,
		DriftDetectionEnabled: hr.GetDriftDetection().GetMode() == helmv2.DriftDetectionEnabled,
	}
}

// skipReason says why a template is not ours to touch, or "".
func (s *scope) skipReason(desired, live *unstructured.Unstructured) string {
	for _, o := range []*unstructured.Unstructured{desired, live} {
		if o == nil {
			continue
		}
		if o.GetLabels()[api.FluxDriftDetectionKey] == "disabled" || o.GetAnnotations()[api.FluxDriftDetectionKey] == "disabled" ||
			o.GetAnnotations()[api.IgnoreAnnotation] == "true" || o.GetLabels()[api.IgnoreAnnotation] == "true" {
			return "opted out"
		}
	}
	if live == nil {
		return ""
	}
	if _, ok := live.GetLabels()[api.TopologyOwnedLabel]; ok {
		return "owned by a ClusterClass topology"
	}
	ann := live.GetAnnotations()
	if ann[api.HelmReleaseNameAnnotation] != s.rel.Name || ann[api.HelmReleaseNamespaceAnnotation] != s.rel.Namespace {
		return fmt.Sprintf("not owned by release %s/%s", s.rel.Namespace, s.rel.Name)
	}
	return ""
}
