package diffreport

import (
	"bytes"
	"encoding/json"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/pipeline"
	"github.com/templatedrift/template-drift-controller/internal/plan"
)

// blockedMsg is a blocked template's message as plan writes it.
const blockedMsg = "correction blocked: strategy recreate would delete the template, and the delete cannot complete: " +
	"it is in use by MachineDeployment md-0; nothing was deleted. Ways out: give the template a new name in the chart"

// Mutations for tmpl: a blocked recreate, and a rotation held by
// consumers outside the release.
func blocked(t *plan.TemplatePlan) {
	drifted(t)
	t.Strategy, t.Message = plan.StrategyRecreate, blockedMsg
}

func heldBy(t *plan.TemplatePlan) {
	rotated(t)
	t.Rotation.HeldBy = []manifest.ID{
		{GroupKind: manifest.KubeadmControlPlaneKind, Namespace: "fleet", Name: "cp-other"},
		{GroupKind: manifest.MachineDeploymentKind, Namespace: "fleet", Name: "md-other"},
	}
}

// withPrune adds the unused replacements the pass would delete.
func withPrune(t *testing.T, res *pipeline.Result, names ...string) *pipeline.Result {
	t.Helper()
	for _, n := range names {
		o := &unstructured.Unstructured{}
		o.SetAPIVersion("infrastructure.cluster.x-k8s.io/v1beta1")
		o.SetKind("Metal3MachineTemplate")
		o.SetNamespace("fleet")
		o.SetName(n)
		res.Prune = append(res.Prune, o)
	}
	return res
}

func TestDiffReportInUse(t *testing.T) {
	imageLine := `      /spec/template/spec/image/url: "http://10.0.0.1/img" → "http://10.0.0.2/img"` + "\n"
	const heldText = "rotated to " + replacement + " for the release's consumers, rolls machines: yes; still in use, with its drift, by " +
		"KubeadmControlPlane fleet/cp-other, MachineDeployment fleet/md-other (not of this release, never repointed)"
	cases := []struct {
		name string           // what the case shows
		res  *pipeline.Result // the pass
		code int              // exit code
		text string           // the whole text output
		// wantTemplate is the first template in JSON, when set.
		wantTemplate map[string]any
		// wantPrune is the JSON prune list; nil when absent.
		wantPrune []any
	}{{
		name: "blocked: drift, with why and the ways out; its fields listed",
		res:  result(tmpl("workers", plan.OutcomeBlocked, blocked)),
		code: ExitDrift,
		text: "HelmRelease fleet/cluster-a (release fleet/cluster-a.v3)\n" +
			"  Metal3MachineTemplate/workers: " + blockedMsg + "\n" +
			imageLine +
			"1 of 1 templates drifted\n",
		wantTemplate: map[string]any{
			"kind": "Metal3MachineTemplate", "name": "workers", "state": "Blocked", "strategy": "recreate",
			"rollsMachines": false, "blocked": blockedMsg, "action": blockedMsg,
			"changes": []any{map[string]any{"path": "/spec/template/spec/image/url", "op": "replace",
				"before": "http://10.0.0.1/img", "after": "http://10.0.0.2/img"}},
		},
	}, {
		name: "held: drift, naming the consumers outside the release",
		res:  result(tmpl("workers", plan.OutcomeHeld, heldBy)),
		code: ExitDrift,
		text: "HelmRelease fleet/cluster-a (release fleet/cluster-a.v3)\n" +
			"  Metal3MachineTemplate/workers: " + heldText + "\n" +
			imageLine +
			"1 of 1 templates drifted\n",
		wantTemplate: map[string]any{
			"kind": "Metal3MachineTemplate", "name": "workers", "state": "Held", "strategy": "rotate",
			"replacement": replacement, "rollsMachines": true,
			"heldBy": []any{"KubeadmControlPlane fleet/cp-other", "MachineDeployment fleet/md-other"}, "action": heldText,
			"changes": []any{map[string]any{"path": "/spec/template/spec/image/url", "op": "replace",
				"before": "http://10.0.0.1/img", "after": "http://10.0.0.2/img"}},
		},
	}, {
		name: "unused replacements alone are no drift: listed after the templates, in the order plan gave",
		res: withPrune(t, result(tmpl("workers", plan.OutcomeInSync, nil)),
			"workers-0a1b2c3d4e", "cp-9999999999"),
		code: ExitInSync,
		text: "HelmRelease fleet/cluster-a (release fleet/cluster-a.v3)\n" +
			"  Metal3MachineTemplate/workers: in sync\n" +
			"  Metal3MachineTemplate fleet/workers-0a1b2c3d4e: unused replacement, would be deleted\n" +
			"  Metal3MachineTemplate fleet/cp-9999999999: unused replacement, would be deleted\n" +
			"0 of 1 templates drifted\n",
		wantPrune: []any{"Metal3MachineTemplate fleet/workers-0a1b2c3d4e", "Metal3MachineTemplate fleet/cp-9999999999"},
	}, {
		name: "blocked, held and a prune together: templates first, then the prune",
		res: withPrune(t, result(tmpl("workers", plan.OutcomeBlocked, blocked), tmpl("cp", plan.OutcomeHeld, heldBy)),
			"workers-0a1b2c3d4e"),
		code: ExitDrift,
		text: "HelmRelease fleet/cluster-a (release fleet/cluster-a.v3)\n" +
			"  Metal3MachineTemplate/workers: " + blockedMsg + "\n" +
			imageLine +
			"  Metal3MachineTemplate/cp: " + heldText + "\n" +
			imageLine +
			"  Metal3MachineTemplate fleet/workers-0a1b2c3d4e: unused replacement, would be deleted\n" +
			"2 of 2 templates drifted\n",
		wantPrune: []any{"Metal3MachineTemplate fleet/workers-0a1b2c3d4e"},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			d := NewDiffReport("fleet/cluster-a", tc.res)
			g.Expect(d.ExitCode()).To(Equal(tc.code))
			g.Expect(d.InSync).To(Equal(tc.code == ExitInSync))

			var text bytes.Buffer
			g.Expect(d.WriteText(&text)).To(Succeed())
			g.Expect(text.String()).To(Equal(tc.text))

			var js bytes.Buffer
			g.Expect(d.WriteJSON(&js)).To(Succeed())
			var m map[string]any
			g.Expect(json.Unmarshal(js.Bytes(), &m)).To(Succeed())
			if tc.wantTemplate != nil {
				g.Expect(m["templates"].([]any)[0]).To(Equal(tc.wantTemplate))
			}
			if tc.wantPrune == nil {
				g.Expect(m).NotTo(HaveKey("prune"), "omitted when empty")
			} else {
				g.Expect(m).To(HaveKeyWithValue("prune", tc.wantPrune))
			}
			for _, tm := range m["templates"].([]any) {
				tm := tm.(map[string]any)
				if tm["state"] != "Blocked" {
					g.Expect(tm).NotTo(HaveKey("blocked"))
				}
				if tm["state"] != "Held" {
					g.Expect(tm).NotTo(HaveKey("heldBy"))
				}
			}

			var back DiffReport
			g.Expect(json.Unmarshal(js.Bytes(), &back)).To(Succeed())
			g.Expect(back).To(Equal(d), "the JSON reads back to the same report")
		})
	}
}

// TestDiffReportHeldIsNeverInSync: a rotation that consumers outside the
// release hold keeps the release out of sync, even if the template's state
// alone would read as in sync.
func TestDiffReportHeldIsNeverInSync(t *testing.T) {
	g := NewWithT(t)
	d := NewDiffReport("fleet/cluster-a", result(tmpl("workers", plan.OutcomeSuperseded, heldBy)))
	g.Expect(d.InSync).To(BeFalse())
	g.Expect(d.ExitCode()).To(Equal(ExitDrift))
	var text bytes.Buffer
	g.Expect(d.WriteText(&text)).To(Succeed())
	g.Expect(text.String()).To(ContainSubstring("still in use, with its drift, by KubeadmControlPlane fleet/cp-other"))
	g.Expect(text.String()).NotTo(ContainSubstring("in sync through its replacement"))
	g.Expect(text.String()).To(ContainSubstring("1 of 1 templates drifted\n"))
}
