package preview

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"
)

var (
	inPlace = Report{HelmRelease: "fleet/a", Chart: "cluster@1.0.0", ApplyMethod: "csa", Objects: []Object{
		{Kind: "Cluster", Name: "mgmt", Change: ChangeNone},
		{Kind: "Metal3MachineTemplate", Name: "mgmt-md0", Change: ChangeUpdate, Note: "in place: rolls nothing; only Machines created later get the change",
			Changes: []FieldChange{{Path: "/spec/template/spec/image/url", Op: "replace", Before: "http://a|b", After: "http://c"}}, MoreChanges: 1},
	}}
	rolling = Report{HelmRelease: "fleet/b", Chart: "cluster@1.0.0", ApplyMethod: "ssa", Objects: []Object{
		{Kind: "MachineDeployment", Name: "mgmt-md0", Change: ChangeUpdate, Rolls: true, Machines: ptr.To[int64](3), Reasons: []string{"Version v1.35.0, v1.36.0 required"}},
		{Kind: "KubeadmControlPlane", Name: "mgmt-cp", Change: ChangeUpdate, Rolls: true, Machines: ptr.To[int64](3)},
	}}
	failing = Report{HelmRelease: "fleet/c", Chart: "cluster@1.0.0", ApplyMethod: "csa", Objects: []Object{
		{Kind: "Metal3DataTemplate", Name: "mgmt-cp-metadata", Change: ChangeRefused, Fails: true, Message: `denied | "cannot be modified"`},
	}}
	nothing = Report{HelmRelease: "fleet/d", Chart: "cluster@1.0.0", ApplyMethod: "csa", Objects: []Object{{Kind: "Cluster", Name: "mgmt", Change: ChangeNone}}}
)

func TestExitCode(t *testing.T) {
	for _, tc := range []struct {
		reports []Report
		want    map[FailOn]int
	}{
		{[]Report{nothing}, map[FailOn]int{FailOnFailure: ExitOK, FailOnRollout: ExitOK, FailOnChange: ExitOK}},
		{[]Report{inPlace}, map[FailOn]int{FailOnFailure: ExitOK, FailOnRollout: ExitOK, FailOnChange: ExitFound}},
		{[]Report{nothing, rolling}, map[FailOn]int{FailOnFailure: ExitOK, FailOnRollout: ExitFound, FailOnChange: ExitFound}},
		{[]Report{failing}, map[FailOn]int{FailOnFailure: ExitFound, FailOnRollout: ExitFound, FailOnChange: ExitFound}},
		{nil, map[FailOn]int{FailOnFailure: ExitOK, FailOnRollout: ExitOK, FailOnChange: ExitOK}},
	} {
		for level, want := range tc.want {
			NewWithT(t).Expect(ExitCode(tc.reports, level)).To(Equal(want), "%s with %d reports", level, len(tc.reports))
		}
	}
	_, err := ParseFailOn("sometimes")
	NewWithT(t).Expect(err).To(MatchError(ContainSubstring("want failure, rollout or change")))
}

func TestSummary(t *testing.T) {
	g := NewWithT(t)
	g.Expect(Summary([]Report{inPlace, rolling, failing, nothing})).To(Equal("4 releases: 1 roll 6 Machines, 1 upgrade would fail"))
	g.Expect(Summary([]Report{nothing})).To(Equal("1 release: 0 roll 0 Machines, 0 upgrades would fail"))
}

func TestWriters(t *testing.T) {
	g := NewWithT(t)
	reports := []Report{inPlace, rolling, failing, nothing}
	var text, md, js bytes.Buffer
	g.Expect(WriteText(&text, reports)).To(Succeed())
	g.Expect(text.String()).To(MatchRegexp(`MachineDeployment/mgmt-md0\s+update\s+updated\s+3 Machines\s+Version v1.35.0, v1.36.0 required`))
	g.Expect(text.String()).To(MatchRegexp(`Metal3DataTemplate/mgmt-cp-metadata\s+refused\s+the upgrade fails\s+no\s+denied`))
	g.Expect(text.String()).NotTo(ContainSubstring("Cluster/mgmt"), "unchanged objects are left out")
	g.Expect(text.String()).To(ContainSubstring("HelmRelease fleet/d (chart cluster@1.0.0, csa)\nOBJECT"))
	g.Expect(text.String()).To(ContainSubstring("nothing changes"))
	g.Expect(text.String()).To(ContainSubstring("Metal3MachineTemplate/mgmt-md0:\n    /spec/template/spec/image/url: \"http://a|b\" → \"http://c\"\n    (+1 more)\n"),
		"the fields, as the condition writes them")

	g.Expect(WriteMarkdown(&md, reports)).To(Succeed())
	g.Expect(md.String()).To(HavePrefix(MarkdownMarker + "\n**4 releases: 1 roll 6 Machines, 1 upgrade would fail**\n\n"))
	g.Expect(md.String()).To(ContainSubstring("| `Metal3DataTemplate/mgmt-cp-metadata` | refused | the upgrade fails | no | denied \\| \"cannot be modified\" |"))
	g.Expect(md.String()).To(ContainSubstring("<details><summary>HelmRelease <code>fleet/d</code> (chart <code>cluster@1.0.0</code>, csa): nothing changes</summary>\n\nNothing changes.\n\n</details>"))
	g.Expect(md.String()).To(MatchRegexp(`<details open><summary>HelmRelease <code>[^<]+</code> \(chart <code>[^<]+</code>, \w+\): rolls 6 Machines, \d+ objects? changes?</summary>`),
		"a release that rolls is open, its summary first")
	g.Expect(md.String()).To(MatchRegexp(`<details open><summary>[^\n]*: the upgrade would fail`))
	g.Expect(strings.Count(md.String(), "<details")).To(Equal(4))
	g.Expect(strings.Count(md.String(), "</details>")).To(Equal(4))
	g.Expect(md.String()).To(ContainSubstring("| <code>/spec/template/spec/image/url: &#34;http://a\\|b&#34; → &#34;http://c&#34;</code><br><code>(+1 more)</code> |"),
		"the fields, a pipe in a value escaped")
	g.Expect(cell("a|b\nc\r\nd")).To(Equal(`a\|b<br>c<br>d`), "a pipe or a newline in a value keeps the table whole")

	g.Expect(WriteJSON(&js, reports)).To(Succeed())
	var doc struct {
		Releases []Report `json:"releases"`
	}
	g.Expect(json.Unmarshal(js.Bytes(), &doc)).To(Succeed())
	g.Expect(js.String()).NotTo(ContainSubstring("null"), "lists are [], never null")
	g.Expect(js.String()).To(ContainSubstring(`"note": ""`), "empty fields are present")
	want := make([]Report, len(reports))
	for i, r := range reports {
		r.Objects = append([]Object{}, r.Objects...)
		for j := range r.Objects {
			if r.Objects[j].Reasons == nil {
				r.Objects[j].Reasons = []string{}
			}
			if r.Objects[j].Changes == nil {
				r.Objects[j].Changes = []FieldChange{}
			}
		}
		want[i] = r
	}
	g.Expect(doc.Releases).To(Equal(want))
}

// TestDriftRows: a template whose drift stays has a row although the
// upgrade leaves it unchanged, with what the add-on then does; a template
// in sync before and after has none; the add-on's mode is said under the
// table; none of it is a change for --fail-on.
func TestDriftRows(t *testing.T) {
	g := NewWithT(t)
	drifted := Report{HelmRelease: "fleet/e", Chart: "cluster@1.0.0", ApplyMethod: "csa", AddonMode: "warn", Objects: []Object{
		{Kind: "Metal3MachineTemplate", Name: "mgmt-md0", Change: ChangeNone,
			Drift: &Drift{Today: "Drifted", After: "Drifted", Fate: "stays", Addon: "would in-place, rolls machines: no"}},
		{Kind: "Metal3MachineTemplate", Name: "mgmt-cp", Change: ChangeNone, Drift: &Drift{Today: "InSync", After: "InSync", Fate: "none"}},
	}}
	var text, md bytes.Buffer
	g.Expect(WriteText(&text, []Report{drifted})).To(Succeed())
	g.Expect(text.String()).To(ContainSubstring("Metal3MachineTemplate/mgmt-md0   unchanged   unchanged, still drifted; then the add-on: would in-place, rolls machines: no"))
	g.Expect(text.String()).NotTo(ContainSubstring("mgmt-cp"))
	g.Expect(text.String()).To(ContainSubstring("the add-on's mode is warn here"))
	g.Expect(WriteMarkdown(&md, []Report{drifted})).To(Succeed())
	g.Expect(md.String()).To(ContainSubstring("| `Metal3MachineTemplate/mgmt-md0` | unchanged | unchanged, still drifted; then the add-on: would in-place"))
	g.Expect(ExitCode([]Report{drifted}, FailOnChange)).To(Equal(ExitOK))
}
