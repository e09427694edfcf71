package report

import (
	"bytes"
	"encoding/json"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/templatedrift/template-drift-controller/internal/apply"
	"github.com/templatedrift/template-drift-controller/internal/diff"
	"github.com/templatedrift/template-drift-controller/internal/plan"
)

func TestDiffReport(t *testing.T) {
	inPlace := func(t *apply.TemplateResult) {
		t.Strategy = plan.StrategyInPlace
		t.Changes = []diff.Change{{Path: "/spec/template/spec/image/url", Op: diff.OpReplace, Before: "http://10.0.0.1/img", After: "http://10.0.0.2/img"}}
	}
	superseded := func(t *apply.TemplateResult) {
		t.Strategy, t.RenameTo, t.Superseded = plan.StrategyRotate, "workers-5f1c2a9b0d", true
	}
	cases := []struct {
		name     string        // what the case shows
		res      *apply.Result // the pass
		code     int           // exit code
		text     []string      // substrings of the text output
		tableRow string        // substring of the table, "" for none
	}{
		{name: "drift", res: result(plan.ModeWarn, 0, tmpl("workers", plan.StateDrifted, inPlace), tmpl("cp", plan.StateInSync, nil)),
			code: ExitDrift, text: []string{"Metal3MachineTemplate/workers: drifted, would in-place (rolls machines: no)",
				`/spec/template/spec/image/url: "http://10.0.0.1/img" → "http://10.0.0.2/img"`, "Metal3MachineTemplate/cp: in sync", "1 of 2 templates drifted"},
			tableRow: "Metal3MachineTemplate/workers  /spec/template/spec/image/url"},
		{name: "in sync, one healed by an earlier rotation", res: result(plan.ModeWarn, 0, tmpl("workers", plan.StateDrifted, superseded)),
			code: ExitInSync, text: []string{"in sync through its replacement workers-5f1c2a9b0d", "0 of 1 templates drifted"}},
		{name: "gate stopped the pass", res: func() *apply.Result {
			r := result(plan.ModeWarn, 0)
			r.Verdict = &plan.Verdict{Status: "Unknown", Reason: "ReleaseUnavailable", Message: "no release"}
			return r
		}(), code: ExitError, text: []string{"cannot diff: ReleaseUnavailable: no release"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			d := NewDiffReport("fleet/cluster", tc.res)
			g.Expect(d.ExitCode()).To(Equal(tc.code))
			var text, table, js bytes.Buffer
			g.Expect(d.WriteText(&text)).To(Succeed())
			for _, s := range tc.text {
				g.Expect(text.String()).To(ContainSubstring(s))
			}
			g.Expect(d.WriteTable(&table)).To(Succeed())
			if tc.tableRow != "" {
				g.Expect(table.String()).To(ContainSubstring(tc.tableRow))
			} else {
				g.Expect(table.String()).To(HavePrefix("TEMPLATE"))
				g.Expect(bytes.Count(table.Bytes(), []byte("\n"))).To(Equal(1), "header only")
			}
			g.Expect(d.WriteJSON(&js)).To(Succeed())
			var back DiffReport
			g.Expect(json.Unmarshal(js.Bytes(), &back)).To(Succeed())
			g.Expect(back.InSync).To(Equal(d.InSync))
			g.Expect(back.Templates).To(HaveLen(len(d.Templates)))
		})
	}
}
