package diff

import (
	"fmt"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/ssa/jsondiff"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Ignorer applies a HelmRelease's spec.driftDetection.ignore rules, so the
// fields a user told helm-controller to ignore are ignored here too, for the
// same objects.
type Ignorer struct {
	rules []compiledRule
}

type compiledRule struct {
	selector *jsondiff.SelectorRegex // nil matches every object
	paths    []string
}

// NewIgnorer compiles helm-controller ignore rules. Each rule is mapped to a
// jsondiff.IgnoreRule field by field exactly as helm-controller v1.6.4
// (internal/action/diff.go) does and compiled with jsondiff.CompileIgnoreRules,
// so selectors (anchored regexes for group, version, kind, name and namespace;
// label and annotation selector expressions) behave identically. A rule
// without target applies to every object. An invalid regex or selector is an
// error naming the rule.
//
// Unlike jsondiff.CompileIgnoreRules on the whole list, rules are compiled one
// by one and kept in order: CompileIgnoreRules keys its result by selector
// pointer, so several rules without target (all keyed by nil) would overwrite
// each other and only the last one's paths would survive.
func NewIgnorer(rules []helmv2.IgnoreRule) (*Ignorer, error) {
	ig := &Ignorer{rules: make([]compiledRule, 0, len(rules))}
	for i, rule := range rules {
		compiled, err := jsondiff.CompileIgnoreRules([]jsondiff.IgnoreRule{toJSONDiffRule(rule)})
		if err != nil {
			return nil, fmt.Errorf("driftDetection.ignore[%d]: %w", i, err)
		}
		for sel, paths := range compiled {
			ig.rules = append(ig.rules, compiledRule{selector: sel, paths: paths})
		}
	}
	return ig, nil
}

// toJSONDiffRule is helm-controller v1.6.4's mapping of a HelmRelease ignore
// rule onto jsondiff's.
func toJSONDiffRule(rule helmv2.IgnoreRule) jsondiff.IgnoreRule {
	r := jsondiff.IgnoreRule{Paths: rule.Paths}
	if rule.Target != nil {
		r.Selector = &jsondiff.Selector{
			Group:              rule.Target.Group,
			Version:            rule.Target.Version,
			Kind:               rule.Target.Kind,
			Name:               rule.Target.Name,
			Namespace:          rule.Target.Namespace,
			AnnotationSelector: rule.Target.AnnotationSelector,
			LabelSelector:      rule.Target.LabelSelector,
		}
	}
	return r
}

// PathsFor returns the ignore paths that apply to obj, in rule order without
// duplicates, for Options.IgnorePaths. obj should be the desired object, as
// helm-controller matches the manifest's objects. A nil Ignorer ignores
// nothing.
func (i *Ignorer) PathsFor(obj *unstructured.Unstructured) []string {
	if i == nil || obj == nil {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	for _, rule := range i.rules {
		if !rule.selector.MatchUnstructured(obj) {
			continue
		}
		for _, p := range rule.paths {
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	return out
}
