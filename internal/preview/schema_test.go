package preview_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	. "github.com/onsi/gomega"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/diff"
	"github.com/templatedrift/template-drift-controller/internal/plan"
	"github.com/templatedrift/template-drift-controller/internal/preview"
	"github.com/templatedrift/template-drift-controller/internal/testenv"
)

// schemaPath is the JSON Schema of `preview -o json`, docs/reference.md's.
const schemaPath = "../../docs/preview.schema.json"

var (
	compileSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
		f, err := os.Open(schemaPath)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		doc, err := jsonschema.UnmarshalJSON(f)
		if err != nil {
			return nil, err
		}
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		c.AssertFormat()
		if err := c.AddResource(schemaPath, doc); err != nil {
			return nil, err
		}
		return c.Compile(schemaPath)
	})
	// shapes are the kinds of report the previews of the tests printed
	// and the schema accepted.
	shapesMu sync.Mutex
	shapes   = map[string]bool{}
)

// checkSchema writes rep as `preview -o json` does and validates it
// against the schema; every preview of the tests goes through it.
func checkSchema(t *testing.T, rep preview.Report) {
	t.Helper()
	sch, err := compileSchema()
	if err != nil {
		t.Fatalf("the schema: %v", err)
	}
	var out bytes.Buffer
	if err := preview.WriteJSON(&out, []preview.Report{rep}); err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(out.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(inst); err != nil {
		t.Fatalf("preview -o json does not match %s: %v\n%s", schemaPath, err, out.String())
	}
	shapesMu.Lock()
	defer shapesMu.Unlock()
	for _, o := range rep.Objects {
		shapes["rolls"] = shapes["rolls"] || o.Rolls
		shapes["fails"] = shapes["fails"] || o.Fails
		if o.Drift != nil {
			shapes["drifted"] = shapes["drifted"] || o.Drift.Today == string(plan.OutcomeDrifted)
			shapes["created"] = shapes["created"] || o.Drift.Today == preview.TodayAbsent
		}
	}
	shapes["helm in flight"] = shapes["helm in flight"] || rep.HelmInFlight()
	shapes["new"] = shapes["new"] || rep.New
	for _, o := range rep.Objects {
		shapes["fields"] = shapes["fields"] || len(o.Changes) > 0
	}
}

// TestSchemaEnums checks the schema's enums against the Go constants: every
// change, outcome and fate the code has is in the schema, and no other.
func TestSchemaEnums(t *testing.T) {
	g := NewWithT(t)
	_, err := compileSchema()
	g.Expect(err).NotTo(HaveOccurred())
	data, err := os.ReadFile(schemaPath)
	g.Expect(err).NotTo(HaveOccurred())
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	g.Expect(err).NotTo(HaveOccurred())
	defs := doc.(map[string]any)["$defs"].(map[string]any)
	enum := func(def, prop string) []string {
		s := defs[def].(map[string]any)
		if prop != "" {
			s = s["properties"].(map[string]any)[prop].(map[string]any)
		}
		var out []string
		for _, v := range s["enum"].([]any) {
			out = append(out, v.(string))
		}
		return out
	}
	g.Expect(enum("object", "change")).To(ConsistOf(constsOf(t, "upgrade.go", "UpgradeChange")))
	g.Expect(enum("object", "change")).To(ConsistOf(preview.ChangeNone, preview.ChangeCreate, preview.ChangeUpdate, preview.ChangeDelete, preview.ChangeRefused))
	g.Expect(enum("drift", "fate")).To(ConsistOf(constsOf(t, "upgrade.go", "DriftFate")))
	g.Expect(enum("outcome", "")).To(ConsistOf(constsOf(t, "outcome.go", "Outcome")))
	g.Expect(enum("release", "addonMode")).To(ConsistOf(string(plan.ModeEnabled), string(plan.ModeWarn), string(plan.ModeDisabled)))
	g.Expect(enum("release", "applyMethod")).To(ConsistOf(string(plan.ApplyServerSide), string(plan.ApplyClientSide)))
	state := defs["state"].(map[string]any)["anyOf"].([]any)
	g.Expect(state).To(ContainElement(HaveKeyWithValue("const", preview.TodayAbsent)))
	g.Expect(enum("fieldChange", "op")).To(ConsistOf(string(diff.OpAdd), string(diff.OpReplace), string(diff.OpRemove)))
	changes := defs["object"].(map[string]any)["properties"].(map[string]any)["changes"].(map[string]any)
	g.Expect(changes["maxItems"]).To(BeEquivalentTo(json.Number(strconv.Itoa(diff.SummaryMaxChanges))), "the condition's limit")
	version := doc.(map[string]any)["properties"].(map[string]any)["version"].(map[string]any)
	g.Expect(version["const"]).To(BeEquivalentTo(json.Number(strconv.Itoa(preview.SchemaVersion))))
}

// constsOf returns the values of the string constants of type typ declared
// in internal/plan's file.
func constsOf(t *testing.T, file, typ string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join("..", "plan", file), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || vs.Type == nil {
			return true
		}
		if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != typ {
			return true
		}
		for _, v := range vs.Values {
			lit, ok := v.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				t.Fatalf("%s: a %s that is not a string literal", file, typ)
			}
			s, _ := strconv.Unquote(lit.Value)
			out = append(out, s)
		}
		return true
	})
	if len(out) == 0 {
		t.Fatalf("no constant of type %s in %s", typ, file)
	}
	return out
}

// TestPreviewJSONShapes previews a drifted template and a release Helm is
// in flight on, and checks that the previews of the tests printed, and the
// schema accepted, every shape of report: a rollout, a failure, a drifted
// template and one the upgrade creates (TestPreviewPredicts), Helm in
// flight.
func TestPreviewJSONShapes(t *testing.T) {
	t.Run("a drifted template", func(t *testing.T) {
		in := install(t, "csa")
		in.driftMachineTemplates(t)
		in.preview(t, `{}`)
	})

	t.Run("Helm in flight: the preview says so and does not pass", func(t *testing.T) {
		g := NewWithT(t)
		in := install(t, "csa")
		// The upgrade stores v2; the HelmRelease as helm-controller has not
		// recorded it yet still names v1 in status.history.
		stale := in
		stale.hr = in.hr.DeepCopy()
		g.Expect(in.upgrade(t, `{"imageURL": "http://192.168.100.9/images/ubuntu.qcow2"}`)).To(Succeed())
		rep := stale.preview(t, `{}`)
		g.Expect(rep.HelmInFlight()).To(BeTrue(), rep.Addon)
		g.Expect(rep.Addon).To(HavePrefix(api.ReleaseInProgressReason + ": waiting: Helm is acting on the release: storage holds v2"))
		for _, o := range rep.Objects {
			g.Expect(o.Drift).To(BeNil(), "no drift predicted while Helm is in flight: %s/%s", o.Kind, o.Name)
		}
		for _, level := range []preview.FailOn{preview.FailOnFailure, preview.FailOnRollout, preview.FailOnChange} {
			g.Expect(preview.ExitCode([]preview.Report{rep}, level)).To(Equal(preview.ExitFound), string(level))
		}
		var out bytes.Buffer
		g.Expect(preview.WriteText(&out, []preview.Report{rep})).To(Succeed())
		g.Expect(out.String()).To(ContainSubstring("the add-on would not look at the templates: ReleaseInProgress"))
	})

	t.Run("a new HelmRelease: what its install creates, no rollout", func(t *testing.T) {
		g := NewWithT(t)
		in := install(t, "csa")
		ctx := context.Background()
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "preview-new-"}}
		g.Expect(in.env.Client.Create(ctx, ns)).To(Succeed())
		hr := in.hr.DeepCopy()
		hr.Namespace, hr.ResourceVersion, hr.Status = ns.Name, "", helmv2.HelmReleaseStatus{}
		root, err := testenv.RepoRoot()
		g.Expect(err).NotTo(HaveOccurred())
		ch, err := loader.Load(filepath.Join(root, testenv.ClusterChartDir))
		g.Expect(err).NotTo(HaveOccurred())
		c, err := client.New(previewer, client.Options{Scheme: in.env.Client.Scheme()})
		g.Expect(err).NotTo(HaveOccurred())
		req := preview.Request{HelmRelease: hr, Local: c, Target: c, TargetConfig: previewer, Kinds: in.kinds, Now: time.Now(), New: true}
		_, err = preview.Run(ctx, req)
		g.Expect(err).To(MatchError(ContainSubstring("it is new: with no stored release to take the chart from, pass its chart with --chart")))
		req.Chart = ch
		rep, err := preview.Run(ctx, req)
		g.Expect(err).NotTo(HaveOccurred())
		checkSchema(t, rep)
		g.Expect(rep.New).To(BeTrue())
		g.Expect(rep.ApplyMethod).To(Equal("ssa"), "helm-controller installs with server-side apply")
		g.Expect(rep.Objects).NotTo(BeEmpty())
		for _, o := range rep.Objects {
			g.Expect(o).To(HaveField("Change", preview.ChangeCreate), "%s/%s", o.Kind, o.Name)
			g.Expect(o.Rolls || o.Fails).To(BeFalse(), "%s/%s", o.Kind, o.Name)
		}
		var out bytes.Buffer
		g.Expect(preview.WriteText(&out, []preview.Report{rep})).To(Succeed())
		g.Expect(out.String()).To(ContainSubstring("HelmRelease " + ns.Name + "/cluster (chart cluster@1.0.0, ssa, new)"))
	})

	shapesMu.Lock()
	defer shapesMu.Unlock()
	want := []string{"drifted", "helm in flight", "new"}
	if f := flag.Lookup("test.run"); f == nil || f.Value.String() == "" {
		// The whole package ran: TestPreviewPredicts too.
		want = append(want, "rolls", "fails", "created", "fields")
	}
	for _, s := range want {
		if !shapes[s] {
			t.Errorf("no preview of the tests printed a report with %s", s)
		}
	}
}

// TestSchemaErrorRow: a fleet's row for a HelmRelease that could not be
// previewed matches the schema, and a release row with an error does not.
func TestSchemaErrorRow(t *testing.T) {
	checkSchema(t, preview.Report{HelmRelease: "fleet/remote", Objects: []preview.Object{},
		Error: "it deploys to a remote cluster (spec.kubeConfig)"})
	sch, err := compileSchema()
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(`{"version": 2, "releases": [{"helmRelease": "fleet/a", "chart": "c@1",
		"applyMethod": "csa", "new": false, "objects": [], "addonMode": "enabled", "error": "x"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if sch.Validate(inst) == nil {
		t.Fatal("a release row with an error matches the schema")
	}
}
