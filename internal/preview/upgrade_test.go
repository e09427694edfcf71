package preview_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/internal/plan"
	"github.com/templatedrift/template-drift-controller/internal/preview"
	"github.com/templatedrift/template-drift-controller/internal/testenv"
)

const (
	infraGV    = "infrastructure.cluster.x-k8s.io/v1beta1"
	driftedURL = "http://10.10.10.17/images/ubuntu.qcow2"
)

// upgrade runs, for real, the upgrade helm-controller would run with
// values: Helm's upgrade action as helm-controller configures it.
func (in installed) upgrade(t *testing.T, values string) error {
	t.Helper()
	v := map[string]any{}
	if err := json.Unmarshal([]byte(values), &v); err != nil {
		t.Fatal(err)
	}
	return testenv.UpgradeClusterChart(context.Background(), in.env, in.hr, v)
}

// list lists the objects of kind in the install's namespace.
func (in installed) list(t *testing.T, apiVersion, kind string) []unstructured.Unstructured {
	t.Helper()
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(schema.FromAPIVersionAndKind(apiVersion, kind+"List"))
	if err := in.env.Client.List(context.Background(), l, client.InNamespace(in.hr.Namespace)); err != nil {
		t.Fatal(err)
	}
	return l.Items
}

// driftMachineTemplates sets the bootstrap cluster's image URL on every
// live Metal3MachineTemplate, as a pivot leaves them.
func (in installed) driftMachineTemplates(t *testing.T) {
	t.Helper()
	for _, m := range in.list(t, infraGV, "Metal3MachineTemplate") {
		if err := unstructured.SetNestedField(m.Object, driftedURL, "spec", "template", "spec", "image", "url"); err != nil {
			t.Fatal(err)
		}
		if err := in.env.Client.Update(context.Background(), &m); err != nil {
			t.Fatal(err)
		}
	}
}

func imageURLs(items []unstructured.Unstructured) []string {
	var out []string
	for _, m := range items {
		u, _, _ := unstructured.NestedString(m.Object, "spec", "template", "spec", "image", "url")
		out = append(out, u)
	}
	return out
}

// TestPreviewThenUpgrade previews a change, then makes the upgrade for
// real (Helm's upgrade action, as helm-controller runs it, on the real
// Cluster API and Metal3 managers and webhooks), and compares the
// prediction with what happened.
func TestPreviewThenUpgrade(t *testing.T) {
	t.Run("a pivoted, drifted machine template and an unrelated change", func(t *testing.T) {
		for _, method := range []string{"csa", "ssa"} {
			t.Run(method, func(t *testing.T) {
				g := NewWithT(t)
				in := install(t, method)
				in.driftMachineTemplates(t)
				const change = `{"kubeletArgs": {"max-pods": "150"}}`
				rep := in.preview(t, change)
				m3mts := map[string]preview.Object{}
				for _, o := range rep.Objects {
					if o.Kind == "Metal3MachineTemplate" {
						m3mts[o.Name] = o
					}
				}
				g.Expect(m3mts).To(HaveLen(2))
				for _, o := range m3mts {
					g.Expect(o.Drift).NotTo(BeNil())
					g.Expect(o.Drift.Today).To(Equal(string(plan.OutcomeDrifted)))
					if method == "csa" {
						// Helm's client-side patch is from the old manifest to the
						// new one, which are equal for this template.
						g.Expect(o.Change).To(Equal(preview.ChangeNone))
						g.Expect(o.Drift.Fate).To(Equal(string(plan.DriftStays)))
						g.Expect(o.Drift.After).To(Equal(string(plan.OutcomeDrifted)))
						g.Expect(o.Drift.Addon).To(ContainSubstring(string(plan.StrategyInPlace)))
					} else {
						g.Expect(o.Change).To(Equal(preview.ChangeUpdate))
						g.Expect(o.Drift.Fate).To(Equal(string(plan.DriftHealed)))
						g.Expect(o.Drift.After).To(Equal(string(plan.OutcomeInSync)))
						g.Expect(o.Drift.Addon).To(BeEmpty())
					}
				}

				g.Expect(in.upgrade(t, change)).To(Succeed())
				want := driftedURL
				if method == "ssa" {
					want = testenv.ClusterChartImageURL
				}
				g.Expect(imageURLs(in.list(t, infraGV, "Metal3MachineTemplate"))).To(ConsistOf(want, want), "as predicted")
				// The add-on's read-only pass on the upgraded world says what
				// the prediction said it would.
				now := in.preview(t, change)
				for _, o := range now.Objects {
					if p, ok := m3mts[o.Name]; ok && o.Kind == "Metal3MachineTemplate" {
						g.Expect(o.Drift).NotTo(BeNil())
						g.Expect(o.Drift.Today).To(Equal(p.Drift.After), o.Name)
						g.Expect(o.Drift.Addon).To(Equal(p.Drift.Addon), o.Name)
					}
				}
			})
		}
	})

	t.Run("locked metaData under the same name: the upgrade fails with the webhook's message", func(t *testing.T) {
		g := NewWithT(t)
		in := install(t, "csa")
		const change = `{"imageServerIP": "192.168.100.9"}`
		rep := in.preview(t, change)
		var messages []string
		for _, o := range rep.Objects {
			if o.Fails {
				messages = append(messages, o.Message)
			}
		}
		g.Expect(messages).NotTo(BeEmpty())
		err := in.upgrade(t, change)
		g.Expect(err).To(HaveOccurred(), "the upgrade fails, as predicted")
		g.Expect(err.Error()).To(ContainSubstring(webhookWords(messages[0])), "with the message predicted")
	})

	t.Run("an image URL: in place, and no new MachineSet", func(t *testing.T) {
		g := NewWithT(t)
		in := install(t, "csa")
		machineSets := func() []string {
			var names []string
			for _, ms := range in.list(t, "cluster.x-k8s.io/v1beta2", "MachineSet") {
				names = append(names, ms.GetName())
			}
			return names
		}
		g.Eventually(machineSets, 30*time.Second).ShouldNot(BeEmpty(), "Cluster API's MachineDeployment controller made the MachineSet")
		before := machineSets()
		const url = "http://192.168.100.9/images/ubuntu.qcow2"
		rep := in.preview(t, `{"imageURL": "`+url+`"}`)
		machines, _ := rep.RolledMachines()
		g.Expect(machines).To(BeZero())
		g.Expect(in.upgrade(t, `{"imageURL": "`+url+`"}`)).To(Succeed())
		g.Expect(imageURLs(in.list(t, infraGV, "Metal3MachineTemplate"))).To(ConsistOf(url, url))
		g.Consistently(machineSets, 5*time.Second).Should(ConsistOf(before), "the same MachineSet")
	})

	t.Run("a renamed bootstrap template: the MachineDeployment rolls, the old template is deleted", func(t *testing.T) {
		g := NewWithT(t)
		in := install(t, "csa")
		machineSets := func() int { return len(in.list(t, "cluster.x-k8s.io/v1beta2", "MachineSet")) }
		g.Eventually(machineSets, 30*time.Second).Should(Equal(1))
		const change = `{"kubeletArgs": {"max-pods": "200"}}`
		rep := in.preview(t, change)
		var deleted []string
		rolls := false
		for _, o := range rep.Objects {
			if o.Change == preview.ChangeDelete {
				deleted = append(deleted, o.Kind+"/"+o.Name)
			}
			if o.Kind == "MachineDeployment" {
				rolls = o.Rolls
			}
		}
		g.Expect(rolls).To(BeTrue())
		g.Expect(deleted).To(HaveLen(1))
		g.Expect(in.upgrade(t, change)).To(Succeed())
		g.Eventually(machineSets, 30*time.Second).Should(Equal(2), "a new MachineSet, as predicted")
		var left []string
		for _, k := range in.list(t, "bootstrap.cluster.x-k8s.io/v1beta2", "KubeadmConfigTemplate") {
			left = append(left, "KubeadmConfigTemplate/"+k.GetName())
		}
		g.Expect(left).NotTo(ContainElement(deleted[0]), "Helm deleted the dropped template")
	})
}

// webhookWords is the webhook's own part of a refusal: what follows the
// last "denied the request: ", which Helm's error repeats.
func webhookWords(message string) string {
	const marker = "denied the request: "
	for i := len(message) - len(marker); i >= 0; i-- {
		if message[i:i+len(marker)] == marker {
			return message[i+len(marker):]
		}
	}
	return message
}
