package plan_test

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/plan"
)

// TestDecideRelease: the release-wide decisions from the templates'
// decisions and the live consumers. A consumer another Helm release owns
// is a conflict and gets no decision; a consumer of a rotated template is
// repointed (rollouts allowed), and the rotation rolls machines; an original that matches the
// manifest again loses its mark; the clean-up spares the replacements in
// effect. The templates' decisions given are not changed.
func TestDecideRelease(t *testing.T) {
	g := NewWithT(t)
	const to = "workers-5f1c2a9b0d"
	rel := plan.Release{Name: "cluster", Namespace: "fleet", Ref: "fleet/cluster.v2"}
	m3mt := id(manifest.Metal3MachineTemplateKind, "fleet", "workers")
	kct := id(bootstrapKind, "fleet", "workers")
	marked := fromYAML(t, `
apiVersion: bootstrap.cluster.x-k8s.io/v1beta2
kind: KubeadmConfigTemplate
metadata: {name: workers, namespace: fleet, annotations: {`+api.SupersededByAnnotation+`: workers-old}}
`)
	templates := []plan.TemplatePlan{
		{ID: m3mt, Outcome: plan.OutcomeDrifted, Strategy: plan.StrategyRotate, Rotation: &plan.Rotation{To: to}, Writes: []plan.Write{plan.WriteCreateReplacement}},
		{ID: kct, Outcome: plan.OutcomeInSync, Live: marked},
	}
	given := []plan.TemplatePlan{templates[0], templates[1]}
	others := fromYAML(t, strings.Replace(mdV1beta2, "{name: md-0, namespace: fleet}",
		"{name: md-other, namespace: fleet, annotations: {meta.helm.sh/release-name: other, meta.helm.sh/release-namespace: fleet}}", 1))
	// replacement is the add-on's replacement in effect, and stale an
	// unused one of an earlier version of the release.
	replacement := fromYAML(t, `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: Metal3MachineTemplate
metadata: {name: `+to+`, namespace: fleet, annotations: {`+api.ReplacesAnnotation+`: workers, `+api.SourceReleaseAnnotation+`: fleet/cluster.v2}}
`)
	stale := fromYAML(t, `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: Metal3MachineTemplate
metadata: {name: workers-0000000000, namespace: fleet, annotations: {`+api.ReplacesAnnotation+`: workers, `+api.SourceReleaseAnnotation+`: fleet/cluster.v1}}
`)
	kinds := []*unstructured.Unstructured{replacement, stale}

	d, err := plan.DecideRelease(plan.ReleaseInput{Options: plan.Options{Mode: plan.ModeEnabled, Prune: true, Rollouts: plan.RolloutsAllow}, Act: true, Release: rel,
		Templates: templates, Consumers: []*unstructured.Unstructured{fromYAML(t, mdV1beta2), others},
		Replaces: plan.Replacements(kinds), Kinds: kinds, Users: plan.Users{}})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(d.Act).To(BeTrue())
	g.Expect(d.Conflicts).To(ConsistOf(plan.Conflict{ID: manifest.IDOf(others), Owner: "fleet/other"}))
	g.Expect(d.Consumers).To(HaveLen(1))
	g.Expect(d.Consumers[0].Changes).To(ConsistOf(HaveField("After", to), HaveField("Path", "/metadata/annotations")),
		"the repoint, and the record of the rollout it makes")
	g.Expect(d.Templates[0].RollsMachines).To(BeTrue(), "a MachineDeployment references the rotated template")
	g.Expect(d.Templates[1].Writes).To(Equal([]plan.Write{plan.WriteUnmark}), "in sync again: the old mark goes")
	g.Expect(d.Prune).To(ConsistOf(stale), "the replacement in effect is spared")
	g.Expect(templates).To(Equal(given), "the templates' decisions given are not changed")
}

// TestOwnObjects: the release's templates, its consumers but one another
// Helm release owns, and the replacements of its templates.
func TestOwnObjects(t *testing.T) {
	g := NewWithT(t)
	rel := plan.Release{Name: "cluster", Namespace: "fleet"}
	tmpl := fromYAML(t, m3mtConsumer)
	mine := fromYAML(t, mdV1beta2)
	others := fromYAML(t, strings.Replace(mdV1beta2, "{name: md-0, namespace: fleet}",
		"{name: md-other, namespace: fleet, annotations: {meta.helm.sh/release-name: other, meta.helm.sh/release-namespace: fleet}}", 1))
	missing := id(manifest.MachineDeploymentKind, "fleet", "md-missing")
	replacement := manifest.ID{GroupKind: manifest.IDOf(tmpl).GroupKind, Namespace: "fleet", Name: "r1"}
	strangers := manifest.ID{GroupKind: manifest.IDOf(tmpl).GroupKind, Namespace: "fleet", Name: "r2"}
	own := plan.OwnObjects([]*unstructured.Unstructured{tmpl},
		map[manifest.ID]*unstructured.Unstructured{manifest.IDOf(mine): mine, manifest.IDOf(others): others, missing: nil},
		map[manifest.ID]manifest.ID{replacement: manifest.IDOf(tmpl), strangers: id(manifest.Metal3MachineTemplateKind, "fleet", "not-ours")}, rel)
	g.Expect(own).To(Equal(map[manifest.ID]bool{
		manifest.IDOf(tmpl): true, manifest.IDOf(mine): true, missing: true, replacement: true,
	}))
}
