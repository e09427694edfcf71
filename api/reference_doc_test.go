package api_test

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/testenv/doctable"
)

// referenceDoc is the user's reference, whose tables list the names this
// package defines.
var referenceDoc = filepath.Join("..", "docs", "reference.md")

// apiSource is parsed rather than listed here by hand, so that a constant
// added to it is checked without anyone remembering this test.
const apiSource = "api.go"

// annotationPrefix marks the add-on's own annotations and labels among
// the constants (Helm's and Cluster API's names are read, not defined).
const annotationPrefix = "templatedrift.io/"

var (
	// docAnnotation matches an annotation of the add-on in a table cell.
	docAnnotation = regexp.MustCompile(`templatedrift\.io/[a-z0-9-]+`)
	// docReason matches a reason written in a table cell: `Name`.
	docReason = regexp.MustCompile("`([A-Z][A-Za-z]+)`")
)

// TestReferenceTablesMatchAPI checks the tables of docs/reference.md that
// list the public contract against the constants of api.go: every
// annotation, condition reason and event reason the code defines has a
// row, and every row names one the code defines. What the code gives each
// reason (a condition's status, an event's type) is checked where the
// code gives it, by internal/report's TestConditionTableStatuses and
// TestEventsTableTypes.
func TestReferenceTablesMatchAPI(t *testing.T) {
	consts, err := doctable.Constants(apiSource)
	if err != nil {
		t.Fatal(err)
	}
	annotations := values(consts, func(_, value string) bool { return strings.HasPrefix(value, annotationPrefix) })
	reasons := values(consts, func(name, _ string) bool { return strings.HasSuffix(name, "Reason") })
	events := values(consts, func(name, _ string) bool { return strings.HasSuffix(name, "Event") })

	tests := []struct {
		name string
		// section and headers select the doc's tables; pattern is what a
		// row's first cell names.
		section string
		headers []string
		pattern *regexp.Regexp
		// code is what api.go defines.
		code []string
	}{
		// The templates' table is headed "marker": its other markers are
		// Flux's, Cluster API's and Helm's, which pattern leaves out.
		{name: "annotations", section: "Annotations", headers: []string{"annotation", "marker"}, pattern: docAnnotation, code: annotations},
		{name: "condition reasons", section: "The TemplatesInSync condition", headers: []string{"reason"}, pattern: docReason, code: reasons},
		// A gate's event reason is its condition reason behind
		// EventReasonPrefix, a constant of its own: a condition reason is
		// no event reason.
		{name: "event reasons", section: "Events", headers: []string{"reason"}, pattern: docReason, code: events},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(tt.code).NotTo(BeEmpty(), "no constants of %s found in %s", tt.name, apiSource)
			var rows []string
			for _, h := range tt.headers {
				names, err := doctable.File(referenceDoc, tt.section, h, tt.pattern)
				g.Expect(err).NotTo(HaveOccurred())
				rows = append(rows, unquote(names)...)
			}
			g.Expect(rows).NotTo(BeEmpty(), "no rows found in the %q tables of %q in %s", tt.headers, "## "+tt.section, referenceDoc)

			// Both directions are collected first, so one run names every
			// mismatch.
			var mismatches []string
			if missing := doctable.Missing(tt.code, rows); len(missing) > 0 {
				mismatches = append(mismatches, "defined in "+apiSource+" but with no row: "+strings.Join(missing, ", "))
			}
			if unknown := doctable.Missing(rows, tt.code); len(unknown) > 0 {
				mismatches = append(mismatches, "a row but not defined in "+apiSource+": "+strings.Join(unknown, ", "))
			}
			g.Expect(mismatches).To(BeEmpty(), "the %s table of %s (%q) and %s disagree:\n%s",
				tt.name, referenceDoc, "## "+tt.section, apiSource, strings.Join(mismatches, "\n"))
		})
	}
}

// values returns the sorted values of the constants that keep accepts.
func values(consts map[string]string, keep func(name, value string) bool) []string {
	var out []string
	for name, v := range consts {
		if keep(name, v) {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out
}

// unquote strips the backquotes docReason keeps around a name.
func unquote(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = strings.Trim(n, "`")
	}
	return out
}

// TestEventReasons: every event reason api.go defines starts with
// EventReasonPrefix, so that none reads like helm-controller's. That the
// reporter emits only these is checked by internal/report's
// TestEventsTableTypes (every reason it emits has a row of the events
// table) and TestReferenceTablesMatchAPI above (every row is one of them).
func TestEventReasons(t *testing.T) {
	g := NewWithT(t)
	consts, err := doctable.Constants(apiSource)
	g.Expect(err).NotTo(HaveOccurred())
	events := values(consts, func(name, _ string) bool { return strings.HasSuffix(name, "Event") })
	g.Expect(events).NotTo(BeEmpty())
	for _, e := range events {
		g.Expect(e).To(HavePrefix(api.EventReasonPrefix), "event reason %s", e)
	}
	g.Expect(api.EventReason(api.ClusterPausedReason)).To(Equal(api.TemplateClusterPausedEvent))
}
