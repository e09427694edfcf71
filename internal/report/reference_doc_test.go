package report

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/pipeline"
	"github.com/templatedrift/template-drift-controller/internal/plan"
	"github.com/templatedrift/template-drift-controller/internal/testenv/doctable"
)

// The tables of referenceDoc checked here: the condition's reasons with
// their status, the events' reasons with their type.
const (
	conditionSection = "The TemplatesInSync condition"
	eventsSection    = "Events"
	reasonHeader     = "reason"
	statusHeader     = "status"
	typeHeader       = "type"
	// The gates' table, whose column gatesColumn writes "`Reason` (Status)".
	gatesSection = "Gates and waits"
	gatesHeader  = "gate, or bad input"
	gatesColumn  = "reason (status)"
)

// Where the literal status and reason pairs are read from: every decision
// is the plan's, and the reason constants are api.go's.
var (
	planDir   = filepath.Join("..", "plan")
	apiSource = filepath.Join("..", "..", "api", "api.go")
)

var (
	// docReason matches a reason written in a table cell: `Name`.
	docReason = regexp.MustCompile("`[A-Z][A-Za-z]+`")
	// gateStatus matches a reason with its status: `Name` (Status).
	gateStatus = regexp.MustCompile("`([A-Z][A-Za-z]+)` \\((True|False|Unknown)\\)")
)

// TestConditionTableStatuses summarizes a pass of every kind (see passes)
// and checks the status column of the condition's reasons table of
// docs/reference.md against the conditions Summarize writes: each reason
// has the status the code gives it, and only that one; so has each reason
// the gates' table writes with a status. So that no way the plan concludes
// escapes the passes, every status and reason pair that internal/plan
// writes as constants must come out of one of them.
func TestConditionTableStatuses(t *testing.T) {
	g := NewWithT(t)
	code := produced{}
	for _, p := range passes(t) {
		if c := Summarize(p.res).Condition; c != nil {
			code.add(c.Reason, string(c.Status), p.name)
		}
	}

	literal, err := literalStatusPairs(planDir, apiSource)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(literal).NotTo(BeEmpty(), "no status and reason pair found in %s: has the way it writes them changed?", planDir)
	var uncovered []string
	for _, p := range literal {
		if !slices.Contains(code.values(p.reason), p.status) {
			uncovered = append(uncovered, fmt.Sprintf("%s gives %s status %s, which no pass of passes() concludes: add one", p.pos, p.reason, p.status))
		}
	}
	g.Expect(uncovered).To(BeEmpty(), "%s", strings.Join(uncovered, "\n"))

	doc := documented(g, conditionSection, statusHeader)
	g.Expect(differences(doc, code, "status", "the conditions Summarize writes")).To(BeEmpty(),
		"the condition reasons table of %s (%q) and the code disagree", referenceDoc, "## "+conditionSection)

	// The gates' table writes the reason of each gate with its status.
	rows, err := doctable.FileRows(referenceDoc, gatesSection, gatesHeader)
	g.Expect(err).NotTo(HaveOccurred())
	var wrong []string
	for _, r := range rows {
		for _, m := range gateStatus.FindAllStringSubmatch(r[gatesColumn], -1) {
			if want := []string{m[2]}; !slices.Equal(code.values(m[1]), want) {
				wrong = append(wrong, fmt.Sprintf("%s: the page's status is %s, the conditions Summarize writes give %s",
					m[1], m[2], code.describe(m[1])))
			}
		}
	}
	g.Expect(wrong).To(BeEmpty(), "the %q column of the gates table of %s (%q) and the code disagree", gatesColumn, referenceDoc, "## "+gatesSection)
}

// TestEventsTableTypes summarizes a pass of every kind (see passes) and
// checks the type column of the events table of docs/reference.md against
// the events Summarize emits: each reason has the type the code gives it,
// and only that one, and each reason emitted has a row.
func TestEventsTableTypes(t *testing.T) {
	g := NewWithT(t)
	code := produced{}
	for _, p := range passes(t) {
		for _, e := range Summarize(p.res).Events {
			code.add(e.Reason, e.Type, p.name)
		}
	}
	doc := documented(g, eventsSection, typeHeader)
	g.Expect(differences(doc, code, "type", "the events Summarize emits")).To(BeEmpty(),
		"the events table of %s (%q) and the code disagree", referenceDoc, "## "+eventsSection)
}

// TestReferenceLiteralStatusPairs checks the reader of the pairs on a file
// of each form: it finds a composite literal's and an assignment's pairs,
// leaves out pairs set from variables and test files, and refuses a pair it
// could only half read.
func TestReferenceLiteralStatusPairs(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	write := func(name, src string) {
		g.Expect(os.WriteFile(filepath.Join(dir, name), []byte("package plan\n\n"+src), 0o600)).To(Succeed())
	}
	write("gates.go", `func a() Verdict { return Verdict{Status: metav1.ConditionUnknown, Reason: api.ClusterPausedReason, Message: "m"} }
func b(c *Conclusion, v Verdict) {
	c.Status, c.Reason, c.Silent = metav1.ConditionTrue, api.NoDriftDetectedReason, false
	*c = Conclusion{Status: v.Status, Reason: v.Reason}
}
`)
	write("gates_test.go", `var _ = Verdict{Status: metav1.ConditionTrue, Reason: api.AccessDeniedReason}`)
	pairs, err := literalStatusPairs(dir, apiSource)
	g.Expect(err).NotTo(HaveOccurred())
	var got []string
	for _, p := range pairs {
		got = append(got, p.reason+"="+p.status)
	}
	g.Expect(got).To(Equal([]string{"ClusterPaused=Unknown", "NoDriftDetected=True"}))

	write("half.go", `func c(r string) Verdict { return Verdict{Status: metav1.ConditionFalse, Reason: r} }`)
	_, err = literalStatusPairs(dir, apiSource)
	g.Expect(err).To(MatchError(ContainSubstring("half.go:3:")))
}

// produced are the values the code gives each reason in a column (a
// status, a type), each with the passes that gave it, for the messages.
type produced map[string]map[string][]string

func (p produced) add(reason, value, pass string) {
	if p[reason] == nil {
		p[reason] = map[string][]string{}
	}
	p[reason][value] = append(p[reason][value], pass)
}

// values are the values given reason, sorted.
func (p produced) values(reason string) []string {
	var out []string
	for v := range p[reason] {
		out = append(out, v)
	}
	slices.Sort(out)
	return out
}

// describe names the values given reason and the passes that gave each.
func (p produced) describe(reason string) string {
	var out []string
	for _, v := range p.values(reason) {
		out = append(out, fmt.Sprintf("%s (passes %q)", v, p[reason][v]))
	}
	return strings.Join(out, " and ")
}

// namedPass is a pass's result, named for the messages.
type namedPass struct {
	name string
	res  *pipeline.Result
}

// passes are results of every kind of pass the reporter formats: one
// stopped by each gate of plan.Gates (driven by facts that trip it), one
// for each error plan.ErrorVerdict maps, and passes that decided their
// templates, concluded by plan.Conclude. Each condition reason and event
// reason of the reference must come out of one of them (the tests above
// fail on a row no pass produces): a new reason needs a pass here.
func passes(t *testing.T) []namedPass {
	t.Helper()
	out := gatePasses(t)
	for _, e := range verdictErrors {
		v, ok := plan.ErrorVerdict(e.err)
		if !ok {
			t.Fatalf("plan.ErrorVerdict does not map %s (%v) to a verdict", e.name, e.err)
		}
		out = append(out, namedPass{name: "error: " + e.name, res: &pipeline.Result{Decisions: plan.Decisions{Verdict: &v}}})
	}
	reverted := func(t *plan.TemplatePlan) { t.Rotation.Reverted = true }
	writeFailed := result(plan.ModeEnabled, 1, tmpl("workers", plan.OutcomeDrifted, inPlace))
	writeFailed.Err = errors.New("failed to patch Metal3MachineTemplate fleet/workers: boom")
	conflict := result(plan.ModeEnabled, 0, tmpl("workers", plan.OutcomeInSync, nil))
	conflict.Conflicts = []plan.Conflict{{ID: manifest.ID{GroupKind: schema.GroupKind{Group: "cluster.x-k8s.io", Kind: "MachineDeployment"}, Namespace: "fleet", Name: "md0"}, Owner: "fleet/other"}}
	pruned := result(plan.ModeEnabled, 0, tmpl("workers", plan.OutcomeInSync, nil))
	pruned.Pruned = []manifest.ID{{GroupKind: m3mtKind, Namespace: "fleet", Name: replacement}}
	return append(out,
		namedPass{"in sync", result(plan.ModeEnabled, 0, tmpl("workers", plan.OutcomeInSync, nil))},
		namedPass{"corrected", result(plan.ModeEnabled, 1, tmpl("workers", plan.OutcomeDrifted, inPlace))},
		namedPass{"corrected earlier", result(plan.ModeEnabled, 0, tmpl("workers", plan.OutcomeCorrected, inPlace))},
		namedPass{"warn", result(plan.ModeWarn, 0, tmpl("workers", plan.OutcomeDrifted, inPlace))},
		namedPass{"a correction refused", result(plan.ModeEnabled, 0, tmpl("workers", plan.OutcomeFailed, failed("admission webhook denied the request")))},
		namedPass{"a write failed", writeFailed},
		namedPass{"blocked, another corrected", result(plan.ModeEnabled, 1,
			tmpl("workers", plan.OutcomeBlocked, failed("in use by MachineSet fleet/md0-abc")), tmpl("data", plan.OutcomeDrifted, inPlace))},
		namedPass{"a template of another release", result(plan.ModeEnabled, 0, tmpl("stolen", plan.OutcomeConflict, failed("owned by release fleet/other")))},
		namedPass{"a consumer of another release", conflict},
		namedPass{"a reference set back", result(plan.ModeEnabled, 1, tmpl("workers", plan.OutcomeDrifted, both(rotated, reverted)))},
		namedPass{"replacements pruned", pruned},
		namedPass{"a rollout awaits approval", result(plan.ModeEnabled, 0, tmpl("workers", plan.OutcomeAwaitingRollout, awaitingRollout(plan.RolloutAwaitingApproval)))},
		namedPass{"a rollout awaits the budget", result(plan.ModeEnabled, 0, tmpl("workers", plan.OutcomeAwaitingRollout, awaitingRollout(plan.RolloutAwaitingBudget)))},
	)
}

// gateTrips each trip a gate, from facts every gate passes.
var gateTrips = []struct {
	name string
	trip func(f *plan.Facts)
}{
	{"an invalid annotation", func(f *plan.Facts) {
		f.ConfigErr = fmt.Errorf("%w: annotation %s=%q", plan.ErrInvalidConfiguration, api.StrategyAnnotation, "sideways")
	}},
	{"mode disabled", func(f *plan.Facts) { f.Options.Mode = plan.ModeDisabled }},
	{"suspended", func(f *plan.Facts) { f.Suspended = true }},
	{"Helm upgrading", func(f *plan.Facts) {
		f.Stored = append(f.Stored, plan.StoredRelease{Version: 3, Status: "pending-upgrade"})
	}},
	{"storage ahead of status.history", func(f *plan.Facts) { f.Stored = append(f.Stored, plan.StoredRelease{Version: 3, Status: "deployed"}) }},
	{"the release unreadable", func(f *plan.Facts) { f.ReleaseErr = errors.New("release fleet/cluster-a.v2 not found") }},
	{"the release uninstalled", func(f *plan.Facts) { f.ReleaseStatus = "uninstalled" }},
	{"rotate under server-side apply", func(f *plan.Facts) {
		f.Options.Strategy, f.Helm.ApplyMethod = plan.StrategyRotate, plan.ApplyServerSide
	}},
	{"a Cluster missing", func(f *plan.Facts) { f.MissingClusters = []string{"fleet/gone"} }},
	{"a Cluster being deleted", func(f *plan.Facts) { f.DeletingClusters = []string{"fleet/going"} }},
	{"a Cluster paused", func(f *plan.Facts) { f.PausedClusters = []string{"fleet/moving"} }},
	{"a template paused", func(f *plan.Facts) { f.PausedObjects = []string{"Metal3MachineTemplate fleet/workers"} }},
}

// verdictErrors are errors plan.ErrorVerdict maps to a verdict.
var verdictErrors = []struct {
	name string
	err  error
}{
	{"an invalid configuration found while deciding", fmt.Errorf("%w: rotate cannot work here", plan.ErrInvalidConfiguration)},
	{"a reference into another namespace", fmt.Errorf("Metal3MachineTemplate fleet/workers: %w", manifest.ErrCrossNamespaceRef)},
	{"the target unreachable", fmt.Errorf("%w: Secret fleet/kubeconfig not found", plan.ErrTargetUnavailable)},
	{"a read refused", apierrors.NewForbidden(schema.GroupResource{Group: "infrastructure.cluster.x-k8s.io", Resource: "metal3machinetemplates"},
		"workers", errors.New("tenant-a cannot get it"))},
}

// gatePasses are the passes gateTrips stop, each with the verdict
// plan.Evaluate gives over plan.Gates. Every gate of plan.Gates must stop
// at least one of them, so that a new gate is not left unchecked.
func gatePasses(t *testing.T) []namedPass {
	t.Helper()
	base := func() plan.Facts {
		return plan.Facts{
			Options:        plan.Options{Mode: plan.ModeEnabled, Strategy: plan.StrategyAuto, Prune: true},
			ReleaseStatus:  "deployed",
			HistoryVersion: 2,
			Stored:         []plan.StoredRelease{{Version: 2, Status: "deployed"}},
		}
	}
	if v, stop := plan.Evaluate(base(), plan.Gates); stop {
		t.Fatalf("the base facts stop at %+v: every gate must pass them", v)
	}
	tripped := make([]bool, len(plan.Gates))
	var out []namedPass
	for _, tr := range gateTrips {
		f := base()
		tr.trip(&f)
		v, stop := plan.Evaluate(f, plan.Gates)
		if !stop {
			t.Fatalf("no gate stops a pass with %s", tr.name)
		}
		for i, gate := range plan.Gates {
			if _, s := gate(f); s {
				tripped[i] = true
			}
		}
		out = append(out, namedPass{name: "gate: " + tr.name, res: &pipeline.Result{Decisions: plan.Decisions{Options: f.Options, Verdict: &v}}})
	}
	for i, gate := range plan.Gates {
		if !tripped[i] {
			t.Errorf("no facts of gateTrips trip %s: add some, so that its verdict is checked against the reference",
				runtime.FuncForPC(reflect.ValueOf(gate).Pointer()).Name())
		}
	}
	return out
}

// documented reads the table of section headed reasonHeader: the values of
// column, without their backquotes, by the reasons each row names.
func documented(g Gomega, section, column string) map[string][]string {
	rows, err := doctable.FileRows(referenceDoc, section, reasonHeader)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(rows).NotTo(BeEmpty(), "no rows found in the %q table of %q in %s", reasonHeader, "## "+section, referenceDoc)
	out := map[string][]string{}
	for _, r := range rows {
		value := strings.Trim(r[column], "` ")
		for _, name := range docReason.FindAllString(r[reasonHeader], -1) {
			name = strings.Trim(name, "`")
			out[name] = addOnce(out[name], value)
		}
	}
	return out
}

// differences compares, reason by reason, the values of a column the page
// gives (doc) with those the code gives (code), and names every
// difference, so that one run names them all.
func differences(doc map[string][]string, code produced, column, source string) []string {
	var out []string
	for _, reason := range sortedKeys(doc) {
		switch {
		case len(code[reason]) == 0:
			out = append(out, fmt.Sprintf("%s: no pass of passes() produces it, so its %s is not checked: add one", reason, column))
		case !slices.Equal(doc[reason], code.values(reason)):
			out = append(out, fmt.Sprintf("%s: the page's %s is %s, %s give %s", reason, column,
				strings.Join(doc[reason], " and "), source, code.describe(reason)))
		}
	}
	var noRow []string
	for reason := range code {
		if len(doc[reason]) == 0 {
			noRow = append(noRow, fmt.Sprintf("%s: in %s (%s %s) but with no row", reason, source, column, code.describe(reason)))
		}
	}
	slices.Sort(noRow)
	return append(out, noRow...)
}

// statusPair is a condition status and reason written together as
// constants.
type statusPair struct {
	status, reason string
	pos            token.Position
}

// conditionStatuses are metav1's condition statuses by constant name.
var conditionStatuses = map[string]metav1.ConditionStatus{
	"ConditionTrue": metav1.ConditionTrue, "ConditionFalse": metav1.ConditionFalse, "ConditionUnknown": metav1.ConditionUnknown,
}

// literalStatusPairs returns the status and reason pairs the Go files of
// dir (tests left out) write as constants: `Status: metav1.ConditionX,
// Reason: api.YReason` in one composite literal, or `x.Status, x.Reason =
// metav1.ConditionX, api.YReason` in one assignment. A literal or an
// assignment that sets one of the two as a constant and the other from a
// variable cannot be read here and is an error: it would hide a pair.
func literalStatusPairs(dir, apiPath string) ([]statusPair, error) {
	reasons, err := doctable.Constants(apiPath)
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	var out []statusPair
	var errs []error
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			var status, reason ast.Expr
			switch n := n.(type) {
			case *ast.CompositeLit:
				for _, e := range n.Elts {
					if kv, ok := e.(*ast.KeyValueExpr); ok {
						status, reason = field(kv.Key, kv.Value, status, reason)
					}
				}
			case *ast.AssignStmt:
				if len(n.Lhs) == len(n.Rhs) {
					for i, l := range n.Lhs {
						if sel, ok := l.(*ast.SelectorExpr); ok {
							status, reason = field(sel.Sel, n.Rhs[i], status, reason)
						}
					}
				}
			default:
				return true
			}
			s, sOK := constant(status, "metav1")
			r, rOK := constant(reason, "api")
			pos := fset.Position(n.Pos())
			switch {
			case sOK && rOK:
				cs, known := conditionStatuses[s]
				value, isReason := reasons[r]
				if !known || !isReason {
					errs = append(errs, fmt.Errorf("%s: metav1.%s with api.%s is not a condition status and a reason of api.go", pos, s, r))
					return true
				}
				out = append(out, statusPair{status: string(cs), reason: value, pos: pos})
			case sOK || rOK:
				errs = append(errs, fmt.Errorf("%s: a status and a reason set together, only one of them a constant: the pair cannot be read", pos))
			}
			return true
		})
	}
	return out, errors.Join(errs...)
}

// field files value as the status or the reason when key names one.
func field(key, value, status, reason ast.Expr) (ast.Expr, ast.Expr) {
	if id, ok := key.(*ast.Ident); ok {
		switch id.Name {
		case "Status":
			return value, reason
		case "Reason":
			return status, value
		}
	}
	return status, reason
}

// constant returns the name of pkg.Name when e is that selector.
func constant(e ast.Expr, pkg string) (string, bool) {
	sel, ok := e.(*ast.SelectorExpr)
	if !ok {
		return "", false
	}
	if id, ok := sel.X.(*ast.Ident); !ok || id.Name != pkg {
		return "", false
	}
	return sel.Sel.Name, true
}

// addOnce adds v to a sorted list of values, once.
func addOnce(values []string, v string) []string {
	if slices.Contains(values, v) {
		return values
	}
	values = append(values, v)
	slices.Sort(values)
	return values
}

func sortedKeys(m map[string][]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
