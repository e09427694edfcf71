package manifest

import (
	"fmt"
	"path"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// DefaultTemplateKinds are the kinds treated as templates unless
// --template-kinds says otherwise: every infrastructure machine and data
// template and every bootstrap config template.
var DefaultTemplateKinds = []string{
	"infrastructure.cluster.x-k8s.io/*MachineTemplate",
	"infrastructure.cluster.x-k8s.io/*DataTemplate",
	"bootstrap.cluster.x-k8s.io/*ConfigTemplate",
}

// KindMatcher selects template kinds by `group/KindPattern` globs
// (path.Match syntax on the kind; the group is matched exactly).
type KindMatcher struct {
	patterns []kindPattern
}

type kindPattern struct {
	group string
	kind  string
}

// ParseKinds compiles `group/KindPattern` specs; an empty list is an error
// because a controller that may write nothing is a misconfiguration.
func ParseKinds(specs []string) (*KindMatcher, error) {
	if len(specs) == 0 {
		return nil, fmt.Errorf("failed to parse template kinds: the list is empty")
	}
	m := &KindMatcher{}
	for _, s := range specs {
		group, kind, ok := strings.Cut(strings.TrimSpace(s), "/")
		if !ok || group == "" || kind == "" || strings.Contains(kind, "/") {
			return nil, fmt.Errorf("failed to parse template kind %q: want group/KindPattern", s)
		}
		if _, err := path.Match(kind, ""); err != nil {
			return nil, fmt.Errorf("failed to parse template kind %q: %w", s, err)
		}
		m.patterns = append(m.patterns, kindPattern{group: group, kind: kind})
	}
	return m, nil
}

// Match reports whether gk is a template kind.
func (m *KindMatcher) Match(gk schema.GroupKind) bool {
	for _, p := range m.patterns {
		if p.group != gk.Group {
			continue
		}
		if ok, _ := path.Match(p.kind, gk.Kind); ok {
			return true
		}
	}
	return false
}

// Groups returns the API groups of the patterns, each once.
func (m *KindMatcher) Groups() []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range m.patterns {
		if !seen[p.group] {
			seen[p.group] = true
			out = append(out, p.group)
		}
	}
	return out
}

// String lists the patterns, for logs and flags.
func (m *KindMatcher) String() string {
	out := make([]string, 0, len(m.patterns))
	for _, p := range m.patterns {
		out = append(out, p.group+"/"+p.kind)
	}
	return strings.Join(out, ",")
}
