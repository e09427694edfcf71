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
| ` + "`First`, `Third`" + ` | False |

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

func TestMissing(t *testing.T) {
	g := NewWithT(t)
	g.Expect(Missing([]string{"a", "b", "c"}, []string{"b"})).To(Equal([]string{"a", "c"}))
	g.Expect(Missing([]string{"a"}, []string{"a"})).To(BeEmpty())
}
