package monitoring

import (
	"os"
	"regexp"
	"strings"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/templatedrift/template-drift-controller/api"
)

// root is the repository root, from this package's directory.
const root = "../.."

// TestShippedQueriesParse: every query of the rules and of the dashboard
// parses, and each names at least one of the add-on's or
// controller-runtime's metrics.
func TestShippedQueriesParse(t *testing.T) {
	g := NewWithT(t)
	_, queries, err := Shipped(root)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(len(queries)).To(BeNumerically(">=", 4+10), "four alerts and the dashboard's panels")
	for _, q := range queries {
		u, err := Parse(q.Expr)
		g.Expect(err).NotTo(HaveOccurred(), q.Source)
		g.Expect(u.Selectors).NotTo(BeEmpty(), q.Source)
	}
}

// TestAlertsHaveRunbooks: every alert has a summary, a description, a
// severity and a runbook_url whose anchor is a section of
// docs/runbooks.md.
func TestAlertsHaveRunbooks(t *testing.T) {
	g := NewWithT(t)
	groups, _, err := Shipped(root)
	g.Expect(err).NotTo(HaveOccurred())
	doc, err := os.ReadFile(root + "/docs/runbooks.md")
	g.Expect(err).NotTo(HaveOccurred())
	anchors := map[string]bool{}
	for _, h := range regexp.MustCompile(`(?m)^#+ (.+)$`).FindAllStringSubmatch(string(doc), -1) {
		anchors[githubAnchor(h[1])] = true
	}
	var alerts []string
	for _, grp := range groups {
		for _, r := range grp.Rules {
			alerts = append(alerts, r.Alert)
			g.Expect(r.Alert).NotTo(BeEmpty(), "only alerting rules")
			g.Expect(r.Annotations).To(HaveKeyWithValue("summary", Not(BeEmpty())), r.Alert)
			g.Expect(r.Annotations).To(HaveKeyWithValue("description", Not(BeEmpty())), r.Alert)
			g.Expect(r.Labels).To(HaveKeyWithValue("severity", BeElementOf("warning", "critical")), r.Alert)
			url := r.Annotations["runbook_url"]
			base, anchor, ok := strings.Cut(url, "#")
			g.Expect(ok).To(BeTrue(), "%s: runbook_url %q has an anchor", r.Alert, url)
			g.Expect(base).To(HaveSuffix("/docs/runbooks.md"), r.Alert)
			g.Expect(anchor).To(Equal(strings.ToLower(r.Alert)), "%s: the runbook section is named after the alert", r.Alert)
			g.Expect(anchors).To(HaveKey(anchor), "%s: docs/runbooks.md has the section #%s", r.Alert, anchor)
		}
	}
	g.Expect(alerts).To(ConsistOf("TemplateDriftNotInSync", "TemplateDriftCorrectionFailing", "TemplateDriftRolloutAwaitingApproval",
		"TemplateDriftReconcileErrors", "TemplateDriftControllerDown"))
}

// githubAnchor is the anchor GitHub gives a Markdown heading.
func githubAnchor(heading string) string {
	h := strings.ToLower(strings.TrimSpace(heading))
	h = regexp.MustCompile(`[^a-z0-9 _-]`).ReplaceAllString(h, "")
	return strings.ReplaceAll(h, " ", "-")
}

// TestMatcherValues: every label value the queries match on, where the
// add-on defines the values, is one it writes: a condition status and
// reason, a correction result and strategy, the controller's name, the
// HelmRelease kind. A renamed reason fails here.
func TestMatcherValues(t *testing.T) {
	g := NewWithT(t)
	_, queries, err := Shipped(root)
	g.Expect(err).NotTo(HaveOccurred())
	reasons := []string{api.NoDriftDetectedReason, api.DriftCorrectedReason, api.DriftDetectedReason,
		api.CorrectionFailedReason, api.CorrectionBlockedReason, api.ReleaseUnavailableReason,
		api.ReleaseInProgressReason, api.ClusterUnavailableReason, api.ClusterPausedReason,
		api.InvalidConfigurationReason, api.AccessDeniedReason, api.OwnershipConflictReason,
		api.RolloutAwaitingApprovalReason, api.RolloutBudgetExhaustedReason}
	// allowed maps a metric name prefix and a label to the values the
	// add-on writes there.
	allowed := map[[2]string][]string{
		{"templatedrift_templates_in_sync_info", "reason"}:   reasons,
		{"templatedrift_templates_in_sync_info", "status"}:   {"True", "False", "Unknown"},
		{"templatedrift_corrections_total", "result"}:        {"success", "failure"},
		{"templatedrift_corrections_total", "strategy"}:      {api.StrategyInPlace, api.StrategyRotate, api.StrategyRecreate},
		{"templatedrift_reconcile_duration_seconds", "kind"}: {"HelmRelease"},
		{"controller_runtime_", "controller"}:                {api.ControllerName},
		{"workqueue_", "name"}:                               {api.ControllerName},
	}
	checked := 0
	for _, q := range queries {
		u, err := Parse(q.Expr)
		g.Expect(err).NotTo(HaveOccurred())
		for _, s := range u.Selectors {
			for _, m := range s.Matchers {
				for key, values := range allowed {
					if !strings.HasPrefix(s.Metric, key[0]) || m.Label != key[1] {
						continue
					}
					alts, ok := m.Alternatives()
					g.Expect(ok).To(BeTrue(), "%s: %s{%s%s%q} matches plain values", q.Source, s.Metric, m.Label, m.Op, m.Value)
					for _, a := range alts {
						g.Expect(values).To(ContainElement(a), "%s: %s{%s=%q}", q.Source, s.Metric, m.Label, a)
						checked++
					}
				}
			}
		}
	}
	g.Expect(checked).To(BeNumerically(">", 0))
}
