package doctable

import (
	"regexp"
	"testing"

	. "github.com/onsi/gomega"
)

const page = `# Title

## Reasons

Some prose that names ` + "`NotARow`" + `.

| reason | status |
|---|---|
| ` + "`Second`" + ` | True |
| ` + "`First`, `Third`" + ` | False \| maybe |

| topic | rule |
|---|---|
| ` + "`OtherTable`" + ` | not read: another header |

### A subsection

| reason | status |
|:---|---|
| ` + "`Fourth`" + ` | still in the section |
| ` + "`First`" + ` | listed twice, returned once |

## Events

| reason | type |
|---|---|
| ` + "`NextSection`" + ` | not read |
`

var backticked = regexp.MustCompile("[A-Z][A-Za-z]+")

func TestColumn(t *testing.T) {
	tests := []struct {
		name, section, header string
		want                  []string
		wantErr               bool
	}{
		{name: "rows of the tables with the header, subsections included, sorted, once each",
			section: "Reasons", header: "reason", want: []string{"First", "Fourth", "Second", "Third"}},
		{name: "another header of the same section", section: "Reasons", header: "topic", want: []string{"OtherTable"}},
		{name: "a section stops at the next one", section: "Events", header: "reason", want: []string{"NextSection"}},
		{name: "no table with that header", section: "Events", header: "name", want: nil},
		{name: "no such section", section: "Metrics", header: "name", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			got, err := Column([]byte(page), tt.section, tt.header, backticked)
			if tt.wantErr {
				g.Expect(err).To(MatchError(ContainSubstring("no section")))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(Equal(tt.want))
		})
	}
}

func TestRows(t *testing.T) {
	g := NewWithT(t)
	rows, err := Rows([]byte(page), "Reasons", "reason")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(rows).To(Equal([]Row{
		{"reason": "`Second`", "status": "True"},
		{"reason": "`First`, `Third`", "status": "False | maybe"},
		{"reason": "`Fourth`", "status": "still in the section"},
		{"reason": "`First`", "status": "listed twice, returned once"},
	}), "in the page's order, an escaped pipe inside its cell")
	_, err = Rows([]byte(page), "Metrics", "name")
	g.Expect(err).To(MatchError(ContainSubstring("no section")))
}

func TestCode(t *testing.T) {
	g := NewWithT(t)
	g.Expect(Code("`35s`, `30s`, `5s`")).To(Equal([]string{"35s", "30s", "5s"}))
	g.Expect(Code("`\"\"`")).To(Equal([]string{`""`}))
	g.Expect(Code("see [Overview](#overview)")).To(BeEmpty())
}

func TestSection(t *testing.T) {
	g := NewWithT(t)
	got, err := Section([]byte(page), "reasons")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(ContainSubstring("`NotARow`"))
	g.Expect(got).To(ContainSubstring("### A subsection"), "subsections are part of it")
	g.Expect(got).NotTo(ContainSubstring("NextSection"), "it stops at the next heading of its level")

	got, err = Section([]byte(page), "a-subsection")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(ContainSubstring("`Fourth`"))
	g.Expect(got).NotTo(ContainSubstring("NextSection"), "it stops at a heading of a higher level")

	_, err = Section([]byte(page), "metrics")
	g.Expect(err).To(MatchError(ContainSubstring("no heading")))
}

func TestAnchor(t *testing.T) {
	g := NewWithT(t)
	g.Expect(Anchor("The TemplatesInSync condition")).To(Equal("the-templatesinsync-condition"))
	g.Expect(Anchor("What the add-on can and cannot fix under each apply mode")).To(Equal("what-the-add-on-can-and-cannot-fix-under-each-apply-mode"))
	g.Expect(Anchor("On Clusters (written by the controller)")).To(Equal("on-clusters-written-by-the-controller"))
}

func TestMissing(t *testing.T) {
	g := NewWithT(t)
	g.Expect(Missing([]string{"a", "b", "c"}, []string{"b"})).To(Equal([]string{"a", "c"}))
	g.Expect(Missing([]string{"a"}, []string{"a"})).To(BeEmpty())
}
