package pipeline

import (
	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/templatedrift/template-drift-controller/internal/diff"
	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/plan"
	"github.com/templatedrift/template-drift-controller/internal/release"
	"github.com/templatedrift/template-drift-controller/internal/target"
)

// pass carries one pass's state between its stages.
type pass struct {
	engine *Engine
	hr     *helmv2.HelmRelease
	target *target.Target
	res    *Result
	// Valid after gather, once the gates passed: the release's objects, its
	// live Clusters, the live templates and consumers of its manifest by ID
	// (nil for those missing), the versions in Helm storage, the compiled
	// ignore rules and the Helm facts.
	rel      *release.Release
	objs     manifest.Objects
	clusters []*unstructured.Unstructured
	live     map[manifest.ID]*unstructured.Unstructured
	stored   []release.Stored
	ignorer  *diff.Ignorer
	helm     plan.HelmFacts
	// previous holds the previous deployed release's templates by ID, and
	// use who uses the release's templates; set by decide.
	previous map[manifest.ID]*unstructured.Unstructured
	use      usage
	// owners are, by template, the owners its replacement or recreate
	// takes over (target.CurrentOwners); set by decide for the templates
	// whose writes need them.
	owners map[manifest.ID][]metav1.OwnerReference
}

// key names the pass's HelmRelease in the rollout budget.
func (p *pass) key() types.NamespacedName {
	return types.NamespacedName{Namespace: p.hr.Namespace, Name: p.hr.Name}
}

func (p *pass) planRelease() plan.Release {
	return plan.Release{Name: p.rel.Name, Namespace: p.rel.Namespace, Ref: p.rel.Ref()}
}

func (p *pass) source() release.Source {
	return release.Source{Secrets: p.target.Secrets, Meta: p.target.Read(), Key: p.target.Key}
}
