package pipeline

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/templatedrift/template-drift-controller/internal/diff"
	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/plan"
)

func memoInput() *plan.TemplateInput {
	live := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "Metal3DataTemplate",
		"metadata": map[string]any{"name": "md0", "namespace": "ns", "uid": "u1", "resourceVersion": "7"},
		"spec":     map[string]any{"clusterName": "bootstrap"},
	}}
	desired := live.DeepCopy()
	desired.Object["spec"] = map[string]any{"clusterName": "mgmt"}
	return &plan.TemplateInput{Live: live, Desired: desired, Requested: plan.StrategyAuto,
		Changes: []diff.Change{{Path: "/spec/clusterName", Op: diff.OpReplace, Before: "bootstrap", After: "mgmt"}}}
}

// TestConfirmationRequest: every part of what the server is asked is in
// the fingerprint, so a change to any of them asks again.
func TestConfirmationRequest(t *testing.T) {
	g := NewWithT(t)
	base, ok := confirmationRequest("local", memoInput())
	g.Expect(ok).To(BeTrue())
	again, _ := confirmationRequest("local", memoInput())
	g.Expect(again).To(Equal(base), "the same request, the same fingerprint")

	changes := map[string]func(in *plan.TemplateInput) string{
		"target":          func(*plan.TemplateInput) string { return "remote" },
		"uid":             func(in *plan.TemplateInput) string { in.Live.SetUID("u2"); return "local" },
		"resourceVersion": func(in *plan.TemplateInput) string { in.Live.SetResourceVersion("8"); return "local" },
		"strategy":        func(in *plan.TemplateInput) string { in.Requested = plan.StrategyRotate; return "local" },
		"desired": func(in *plan.TemplateInput) string {
			in.Desired.Object["spec"] = map[string]any{"clusterName": "other"}
			return "local"
		},
		"changes": func(in *plan.TemplateInput) string { in.Changes[0].After = "other"; return "local" },
	}
	for name, change := range changes {
		in := memoInput()
		key := change(in)
		got, ok := confirmationRequest(key, in)
		g.Expect(ok).To(BeTrue(), name)
		g.Expect(got).NotTo(Equal(base), "a change of %s asks again", name)
	}

	in := memoInput()
	in.Desired.Object["spec"] = map[string]any{"bad": func() {}}
	_, ok = confirmationRequest("local", in)
	g.Expect(ok).To(BeFalse(), "what cannot be fingerprinted is not remembered")
}

// TestConfirmations: an answer is used for its request, within the TTL,
// until its release or every release is forgotten.
func TestConfirmations(t *testing.T) {
	g := NewWithT(t)
	now := time.Unix(1000, 0)
	c := &Confirmations{TTL: time.Minute, Now: func() time.Time { return now }}
	hr, other := types.NamespacedName{Namespace: "ns", Name: "cluster"}, types.NamespacedName{Namespace: "ns", Name: "other"}
	id := manifest.IDOf(memoInput().Live)
	answer := confirmation{dryRun: plan.DryRunLocked, dryRunMessage: "spec is immutable"}

	_, ok := c.get(hr, id, "r1")
	g.Expect(ok).To(BeFalse(), "nothing remembered yet")
	c.put(hr, id, "r1", answer)
	c.put(other, id, "r1", answer)
	got, ok := c.get(hr, id, "r1")
	g.Expect(ok).To(BeTrue())
	g.Expect(got.dryRun).To(Equal(plan.DryRunLocked))
	g.Expect(got.dryRunMessage).To(Equal("spec is immutable"))
	_, ok = c.get(hr, id, "r2")
	g.Expect(ok).To(BeFalse(), "another request")
	g.Expect(c.Hits()).To(Equal(uint64(1)))

	now = now.Add(time.Minute)
	_, ok = c.get(hr, id, "r1")
	g.Expect(ok).To(BeFalse(), "past the TTL")
	c.put(hr, id, "r1", answer)
	_, ok = c.get(hr, id, "r1")
	g.Expect(ok).To(BeTrue(), "answered again, remembered again")
	g.Expect(c.Len()).To(Equal(2))

	c.Forget(hr)
	_, ok = c.get(hr, id, "r1")
	g.Expect(ok).To(BeFalse(), "the release is forgotten")
	g.Expect(c.Len()).To(Equal(1), "the other release is not")

	c.drop(other, id)
	g.Expect(c.Len()).To(BeZero())
	c.put(hr, id, "r1", answer)
	c.Reset()
	g.Expect(c.Len()).To(BeZero(), "every release is forgotten")

	var none *Confirmations
	none.put(hr, id, "r1", answer)
	none.Forget(hr)
	none.Reset()
	none.drop(hr, id)
	_, ok = none.get(hr, id, "r1")
	g.Expect(ok).To(BeFalse(), "no memo: nothing is remembered")
	g.Expect(none.Len()).To(BeZero())
}
