package diffreport

import (
	"bytes"
	"encoding/json"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/diff"
	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/pipeline"
	"github.com/templatedrift/template-drift-controller/internal/plan"
)

// The reports of a fleet: a release in sync, one drifted (rotated, its
// consumer repointed, a replacement to delete), one whose pass could not
// look, one with a template of another release.
var (
	inSyncReport  = NewDiffReport("fleet/a", result(tmpl("cp", plan.OutcomeInSync, nil)))
	driftedReport = func() DiffReport {
		res := result(tmpl("workers", plan.OutcomeDrifted, rotated), tmpl("cp", plan.OutcomeInSync, nil))
		res.Consumers = []plan.ConsumerPlan{{ID: manifest.ID{GroupKind: manifest.MachineDeploymentKind, Namespace: "fleet", Name: "md-0"},
			Changes: []diff.Change{{Path: "/spec/template/spec/infrastructureRef/name", Op: diff.OpReplace, Before: "workers", After: replacement}}}}
		d := NewDiffReport("fleet/b", res)
		d.Prune = []string{"Metal3MachineTemplate fleet/workers-0123456789"}
		return d
	}()
	stoppedReport = func() DiffReport {
		res := result()
		res.Verdict = &plan.Verdict{Status: metav1.ConditionUnknown, Reason: api.ReleaseUnavailableReason, Message: "no release"}
		return NewDiffReport("fleet/c", res)
	}()
	conflictReport = func() DiffReport {
		res := result(tmpl("stolen", plan.OutcomeConflict, func(t *plan.TemplatePlan) { t.Message = "owned by release fleet/victim" }),
			tmpl("opted", plan.OutcomeSkipped, func(t *plan.TemplatePlan) { t.Message = "opted | out" }))
		res.Conflicts = []plan.Conflict{{ID: manifest.ID{GroupKind: manifest.MachineDeploymentKind, Namespace: "fleet", Name: "md0"}, Owner: "fleet/victim"}}
		return NewDiffReport("fleet/d", res)
	}()
)

// TestFleetExitCode: a fleet exits as its worst release.
func TestFleetExitCode(t *testing.T) {
	cases := []struct {
		name  string
		fleet Fleet
		code  int
	}{
		{name: "nothing selected", fleet: Fleet{}, code: ExitInSync},
		{name: "all in sync", fleet: Fleet{inSyncReport, inSyncReport}, code: ExitInSync},
		{name: "a template of another release", fleet: Fleet{inSyncReport, conflictReport}, code: ExitDrift},
		{name: "one drifted", fleet: Fleet{inSyncReport, driftedReport}, code: ExitDrift},
		{name: "one could not look, after a drifted one", fleet: Fleet{driftedReport, stoppedReport}, code: ExitError},
		{name: "one could not look, before a drifted one", fleet: Fleet{stoppedReport, driftedReport}, code: ExitError},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			NewWithT(t).Expect(c.fleet.ExitCode()).To(Equal(c.code))
		})
	}
	g := NewWithT(t)
	g.Expect(Fleet{inSyncReport, driftedReport, stoppedReport}.Summary()).To(Equal("3 releases: 1 not in sync, 1 could not be diffed"))
	g.Expect(Fleet{inSyncReport}.Summary()).To(Equal("1 release: 0 not in sync, 0 could not be diffed"))
}

func TestFleetWriteText(t *testing.T) {
	g := NewWithT(t)
	var got, want bytes.Buffer
	g.Expect(Fleet{inSyncReport, stoppedReport}.WriteText(&got)).To(Succeed())
	g.Expect(inSyncReport.WriteText(&want)).To(Succeed())
	want.WriteString("\n")
	g.Expect(stoppedReport.WriteText(&want)).To(Succeed())
	want.WriteString("\n2 releases: 0 not in sync, 1 could not be diffed\n")
	g.Expect(got.String()).To(Equal(want.String()), "each report as for one HelmRelease, then the total")
}

func TestFleetWriteJSON(t *testing.T) {
	g := NewWithT(t)
	var out bytes.Buffer
	g.Expect(Fleet{}.WriteJSON(&out)).To(Succeed())
	g.Expect(out.String()).To(MatchJSON(`{"releases": []}`), "no releases is an empty list, not null")

	out.Reset()
	g.Expect(Fleet{inSyncReport, driftedReport}.WriteJSON(&out)).To(Succeed())
	var doc struct{ Releases []DiffReport }
	g.Expect(json.Unmarshal(out.Bytes(), &doc)).To(Succeed())
	g.Expect(doc.Releases).To(Equal([]DiffReport{inSyncReport, driftedReport}))
}

func TestFleetWriteMarkdown(t *testing.T) {
	g := NewWithT(t)
	var out bytes.Buffer
	g.Expect(Fleet{inSyncReport, driftedReport, stoppedReport, conflictReport}.WriteMarkdown(&out)).To(Succeed())
	g.Expect(out.String()).To(Equal("**4 releases: 2 not in sync, 1 could not be diffed**\n\n" +
		"### HelmRelease `fleet/a` (release `fleet/cluster-a.v3`)\n\n" +
		"0 of 1 templates drifted.\n\n" +
		"### HelmRelease `fleet/b` (release `fleet/cluster-a.v3`)\n\n" +
		"| object | diff | field | before | after |\n|---|---|---|---|---|\n" +
		"| `Metal3MachineTemplate/workers` | would rotate to " + replacement + ", rolls machines: yes | `/spec/template/spec/image/url` | `\"http://10.0.0.1/img\"` | `\"http://10.0.0.2/img\"` |\n" +
		"| `MachineDeployment/md-0` | would repoint | `/spec/template/spec/infrastructureRef/name` | `\"workers\"` | `\"" + replacement + "\"` |\n" +
		"| `Metal3MachineTemplate fleet/workers-0123456789` | unused replacement, would be deleted |  |  |  |\n" +
		"\n1 of 2 templates drifted.\n\n" +
		"### HelmRelease `fleet/c` (release `fleet/cluster-a.v3`)\n\n" +
		"Cannot diff: ReleaseUnavailable: no release\n\n" +
		"### HelmRelease `fleet/d` (release `fleet/cluster-a.v3`)\n\n" +
		"| object | diff | field | before | after |\n|---|---|---|---|---|\n" +
		"| `Metal3MachineTemplate/stolen` | not this release's, left untouched (owned by release fleet/victim) |  |  |  |\n" +
		"| `Metal3MachineTemplate/opted` | skipped (opted \\| out) |  |  |  |\n" +
		"| `MachineDeployment/md0` | not this release's, left untouched (owned by release fleet/victim) |  |  |  |\n" +
		"\n0 of 2 templates drifted.\n\n"))
}

func TestCode(t *testing.T) {
	g := NewWithT(t)
	g.Expect(code(`"a|b"`)).To(Equal("`\"a\\|b\"`"), "a pipe is escaped in a table")
	g.Expect(code("a`b")).To(Equal("`` a`b ``"), "a backtick inside needs a longer fence")
	g.Expect(code("a\nb")).To(Equal("`a b`"), "one line")
}

// TestFleetOfPass checks a fleet built from passes as the diff command
// builds it, so that the fixtures above stay what a pass reports.
func TestFleetOfPass(t *testing.T) {
	g := NewWithT(t)
	res := &pipeline.Result{}
	res.Verdict = &plan.Verdict{Reason: api.ReleaseUnavailableReason, Message: "x"}
	g.Expect(Fleet{NewDiffReport("fleet/x", res)}.ExitCode()).To(Equal(ExitError))
	g.Expect(driftedReport.ExitCode()).To(Equal(ExitDrift))
	g.Expect(conflictReport.ExitCode()).To(Equal(ExitDrift), "not in sync, as the condition says")
}
