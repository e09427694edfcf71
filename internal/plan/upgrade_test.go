package plan

import (
	"errors"
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestJudgeUpgrade(t *testing.T) {
	md := fromYAML(t, mdV1beta2)
	renamed := edit(t, md, "md0-v2", "spec", "template", "spec", "infrastructureRef", "name")
	served := edit(t, md, "42", "metadata", "resourceVersion")
	served = edit(t, served, map[string]any{"phase": "Running"}, "status")
	tmpl := fromYAML(t, "apiVersion: infrastructure.cluster.x-k8s.io/v1beta1\nkind: Metal3MachineTemplate\nmetadata: {name: t, namespace: ns}\nspec: {template: {spec: {image: {url: a}}}}\n")
	denied := errors.New(`admission webhook denied the request: cannot be modified`)
	for _, tc := range []struct {
		name string
		f    UpgradeFacts
		want UpgradeEffect
	}{
		{"a refused template", UpgradeFacts{Live: tmpl, Refusal: denied, Template: true},
			UpgradeEffect{Change: UpgradeRefused, Fails: true, Note: noteRenameLocked}},
		{"a refused consumer", UpgradeFacts{Live: md, Refusal: denied}, UpgradeEffect{Change: UpgradeRefused, Fails: true}},
		{"a refused deletion", UpgradeFacts{Live: md, Refusal: denied, Dropped: true}, UpgradeEffect{Change: UpgradeDelete, Fails: true}},
		{"a deletion", UpgradeFacts{Live: md, Dropped: true}, UpgradeEffect{Change: UpgradeDelete}},
		{"a creation", UpgradeFacts{After: md}, UpgradeEffect{Change: UpgradeCreate}},
		{"only what the server maintains differs", UpgradeFacts{Live: md, After: served}, UpgradeEffect{Change: UpgradeUnchanged}},
		{"only the conversion's record of the status differs", UpgradeFacts{Live: edit(t, md, map[string]any{conversionDataAnnotation: `{"status":{"lastUpdated":"a"}}`}, "metadata", "annotations"),
			After: edit(t, served, map[string]any{conversionDataAnnotation: `{"status":{"lastUpdated":"b"}}`}, "metadata", "annotations")}, UpgradeEffect{Change: UpgradeUnchanged}},
		{"a template changed in place", UpgradeFacts{Live: tmpl, After: edit(t, tmpl, "b", "spec", "template", "spec", "image", "url"), Template: true},
			UpgradeEffect{Change: UpgradeUpdate, Note: noteInPlace}},
		{"a MachineDeployment that rolls", UpgradeFacts{Live: md, After: renamed},
			UpgradeEffect{Change: UpgradeUpdate, Rollout: Rollout{Rolls: true, Reasons: []string{"Metal3Machine is not up-to-date"}}}},
		{"a MachineDeployment that does not roll", UpgradeFacts{Live: md, After: edit(t, md, int64(5), "spec", "replicas")},
			UpgradeEffect{Change: UpgradeUpdate}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			got, err := JudgeUpgrade(tc.f)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(Equal(tc.want))
		})
	}
	_, err := JudgeUpgrade(UpgradeFacts{Live: md, After: fromYAML(t, mdV1beta1)})
	NewWithT(t).Expect(err).To(HaveOccurred(), "an effect the rules cannot give is an error")
}

func TestUpgradeRefusal(t *testing.T) {
	g := NewWithT(t)
	gr := schema.GroupResource{Group: "infrastructure.cluster.x-k8s.io", Resource: "metal3datatemplates"}
	g.Expect(UpgradeRefusal(apierrors.NewInvalid(schema.GroupKind{Kind: "Metal3DataTemplate"}, "t", nil))).To(BeTrue())
	g.Expect(UpgradeRefusal(apierrors.NewForbidden(gr, "t", errors.New(`admission webhook "validation.metal3datatemplate.infrastructure.cluster.x-k8s.io" denied the request`)))).To(BeTrue())
	rbac := apierrors.NewForbidden(gr, "t", errors.New(`User "ci" cannot delete resource "metal3datatemplates" in API group "infrastructure.cluster.x-k8s.io" in the namespace "fleet"`))
	g.Expect(UpgradeRefusal(rbac)).To(BeFalse(), "the previewer's own rights say nothing of helm-controller's")
	g.Expect(AccessDenied(rbac)).To(BeTrue())
	g.Expect(AccessDenied(apierrors.NewForbidden(gr, "t", errors.New("denied by webhook")))).To(BeFalse())
	g.Expect(AccessDenied(apierrors.NewInvalid(schema.GroupKind{Kind: "Metal3DataTemplate"}, "t", nil))).To(BeFalse())
	g.Expect(UpgradeRefusal(apierrors.NewBadRequest("bad"))).To(BeTrue())
	g.Expect(UpgradeRefusal(apierrors.NewAlreadyExists(gr, "t"))).To(BeTrue())
	g.Expect(UpgradeRefusal(apierrors.NewServiceUnavailable("busy"))).To(BeFalse(), "a failure to answer")
	g.Expect(UpgradeRefusal(apierrors.NewNotFound(gr, "t"))).To(BeFalse())
	g.Expect(UpgradeRefusal(errors.New("connection refused"))).To(BeFalse())
}

func TestFateOfDrift(t *testing.T) {
	for _, tc := range []struct {
		name          string
		today, after  Outcome
		refused, fail bool
		want          DriftFate
	}{
		{"in sync before and after", OutcomeInSync, OutcomeInSync, false, false, DriftNone},
		{"corrected by the add-on, in sync after", OutcomeCorrected, OutcomeInSync, false, false, DriftNone},
		{"the upgrade writes over the drift", OutcomeDrifted, OutcomeInSync, false, false, DriftHealed},
		{"a client-side-apply upgrade leaves it", OutcomeDrifted, OutcomeDrifted, false, false, DriftStays},
		{"blocked now, still blocked", OutcomeBlocked, OutcomeBlocked, false, false, DriftStays},
		{"in sync now, drifted after", OutcomeInSync, OutcomeDrifted, false, false, DriftAppears},
		{"refused: the upgrade fails on it", OutcomeDrifted, "", true, true, DriftFailsUpgrade},
		{"refused although in sync now", OutcomeInSync, "", true, true, DriftFailsUpgrade},
		{"the upgrade fails elsewhere: the drift stays", OutcomeDrifted, "", false, true, DriftStays},
		{"the upgrade fails elsewhere: in sync stays in sync", OutcomeInSync, "", false, true, DriftNone},
		{"a failed upgrade ignores the after pass", OutcomeInSync, OutcomeDrifted, false, true, DriftNone},
	} {
		t.Run(tc.name, func(t *testing.T) {
			NewWithT(t).Expect(FateOfDrift(tc.today, tc.after, tc.refused, tc.fail)).To(Equal(tc.want))
		})
	}
}
