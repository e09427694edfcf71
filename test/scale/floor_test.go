package scale

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/templatedrift/template-drift-controller/test/harness"
)

func call(verb, uri, ns, body string) harness.Call {
	return harness.Call{Verb: verb, RequestURI: uri, ObjectRef: harness.ObjectRef{Namespace: ns}, RequestObject: json.RawMessage(body)}
}

func TestReplayOf(t *testing.T) {
	tests := []struct {
		name                string
		call                harness.Call
		method, contentType string
		body                string
		wantErr             bool
	}{
		{name: "a JSON patch loses its resourceVersion operations",
			call: call("patch", "/apis/infrastructure.cluster.x-k8s.io/v1beta1/namespaces/a/metal3machinetemplates/mgmt-md0?fieldManager=template-drift-controller", "a",
				`[{"op":"replace","path":"/metadata/resourceVersion","value":"42"},{"op":"replace","path":"/spec/template/spec/image/url","value":"http://mgmt"}]`),
			method: "PATCH", contentType: "application/json-patch+json", body: `[{"op":"replace","path":"/spec/template/spec/image/url","value":"http://mgmt"}]`},
		{name: "a status merge patch loses its optimistic lock",
			call:   call("patch", "/apis/helm.toolkit.fluxcd.io/v2/namespaces/a/helmreleases/cluster/status", "a", `{"metadata":{"resourceVersion":"7"},"status":{"conditions":[]}}`),
			method: "PATCH", contentType: "application/merge-patch+json", body: `{"status":{"conditions":[]}}`},
		{name: "a create keeps its name and loses resourceVersion and uid",
			call:   call("create", "/api/v1/namespaces/a/events", "a", `{"metadata":{"name":"e1","namespace":"a","resourceVersion":"","uid":"u"},"reason":"DriftCorrected"}`),
			method: "POST", contentType: "application/json", body: `{"metadata":{"name":"e1","namespace":"a"},"reason":"DriftCorrected"}`},
		{name: "a delete loses its preconditions",
			call:   call("delete", "/apis/infrastructure.cluster.x-k8s.io/v1beta1/namespaces/a/lockedmachinetemplates/spare", "a", `{"kind":"DeleteOptions","preconditions":{"uid":"u","resourceVersion":"9"}}`),
			method: "DELETE", contentType: "application/json", body: `{"kind":"DeleteOptions"}`},
		{name: "a read is no write", call: call("get", "/api/v1/namespaces/a/secrets/x", "a", ""), wantErr: true},
		{name: "a body that does not parse", call: call("patch", "/x", "a", `[{`), wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			r, err := ReplayOf(tt.call)
			if tt.wantErr {
				g.Expect(err).To(HaveOccurred())
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(r.Method).To(Equal(tt.method))
			g.Expect(r.ContentType).To(Equal(tt.contentType))
			g.Expect(r.URI).To(Equal(tt.call.RequestURI))
			g.Expect(r.Namespace).To(Equal("a"))
			g.Expect(string(r.Body)).To(MatchJSON(tt.body))
		})
	}
}

func TestClientSettings(t *testing.T) {
	g := NewWithT(t)
	w, q, b, err := clientSettings([]string{"--watch-all-namespaces=true", "--resync-interval=30s"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect([]any{w, q, b}).To(Equal([]any{4, float32(50), 300}))
	w, q, b, err = clientSettings([]string{"--concurrent=8", "--kube-api-qps=200", "--kube-api-burst=500"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect([]any{w, q, b}).To(Equal([]any{8, float32(200), 500}))
	_, _, _, err = clientSettings([]string{"--concurrent=many"})
	g.Expect(err).To(MatchError(ContainSubstring(`"--concurrent=many"`)))
}

func TestLimiterKey(t *testing.T) {
	g := NewWithT(t)
	g.Expect(limiterKey("/api/v1/namespaces/a/events")).To(Equal("events"))
	g.Expect(limiterKey("/apis/events.k8s.io/v1/namespaces/a/events")).To(Equal("events"))
	g.Expect(limiterKey("/api/v1/namespaces/a/secrets/x?fieldManager=m")).To(Equal("v1/secrets"))
	g.Expect(limiterKey("/api/v1/namespaces")).To(Equal("v1/namespaces"))
	g.Expect(limiterKey("/apis/helm.toolkit.fluxcd.io/v2/namespaces/a/helmreleases/cluster/status")).To(Equal("helm.toolkit.fluxcd.io/v2/helmreleases"))
	g.Expect(limiterKey("/apis/helm.toolkit.fluxcd.io/v2/namespaces/a/helmreleases")).To(Equal("helm.toolkit.fluxcd.io/v2/helmreleases"))
	g.Expect(limiterKey("/apis/infrastructure.cluster.x-k8s.io/v1beta1/namespaces/a/metal3machinetemplates/m")).To(Equal("infrastructure.cluster.x-k8s.io/v1beta1/metal3machinetemplates"))
	g.Expect(limiterKey("/apis/cluster.x-k8s.io/v1beta2/clusters")).To(Equal("cluster.x-k8s.io/v1beta2/clusters"))
}

// TestConvergenceDryRuns: the dry-run replay takes the add-on's dry-runs in
// the window, refused ones too, and nothing else.
func TestConvergenceDryRuns(t *testing.T) {
	g := NewWithT(t)
	const dry = "/apis/infrastructure.cluster.x-k8s.io/v1beta1/namespaces/fleet-0001/metal3machinetemplates/x?dryRun=All&fieldManager=t"
	refused := strings.Replace(auditLineURI("ResponseComplete", ControllerUser, "patch", "metal3machinetemplates", "", "2026-01-01T00:00:03.000000Z", dry),
		`"code":200`, `"code":422`, 1)
	lines := []string{
		auditLineURI("ResponseComplete", ControllerUser, "patch", "metal3machinetemplates", "", "2026-01-01T00:00:02.000000Z", dry),
		refused,
		// A stored write, a question, a dry-run outside the window and
		// another user's dry-run: not replayed as dry-runs.
		auditLine("ResponseComplete", ControllerUser, "patch", "helmreleases", "status", "2026-01-01T00:00:02.500000Z"),
		auditLineURI("ResponseComplete", ControllerUser, "create", "selfsubjectaccessreviews", "", "2026-01-01T00:00:02.600000Z",
			"/apis/authorization.k8s.io/v1/selfsubjectaccessreviews?dryRun=All"),
		auditLineURI("ResponseComplete", ControllerUser, "patch", "metal3machinetemplates", "", "2026-01-01T00:00:09.000000Z", dry),
		auditLineURI("ResponseComplete", "admin", "patch", "metal3machinetemplates", "", "2026-01-01T00:00:02.000000Z", dry),
	}
	path := filepath.Join(t.TempDir(), "audit.log")
	g.Expect(os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644)).To(Succeed())
	at := func(s float64) time.Time {
		return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(s * float64(time.Second)))
	}

	got, err := ConvergenceDryRuns(path, ControllerUser, Window{at(1), at(5)})

	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(HaveLen(2))
	g.Expect(got[0].ResponseStatus.Code).To(Equal(200))
	g.Expect(got[1].ResponseStatus.Code).To(Equal(422))
	writes, err := ConvergenceWrites(path, ControllerUser, Window{at(1), at(5)})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(writes).To(HaveLen(1), "the status patch only")
	rp, err := ReplayOf(got[1])
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(rp.Code).To(Equal(422))
	g.Expect(rp.URI).To(ContainSubstring("dryRun=All"), "a dry-run is replayed as a dry-run")
}

// TestSameAnswer: a replay must get the add-on's answer, or it is not the
// same work.
func TestSameAnswer(t *testing.T) {
	g := NewWithT(t)
	refused := errors.New("Metal3MachineTemplate.infrastructure.cluster.x-k8s.io \"x\" is invalid")
	g.Expect(sameAnswer(Replay{Code: 200}, 200, nil)).To(Succeed())
	g.Expect(sameAnswer(Replay{Code: 201, Method: "POST", URI: "/e"}, 409, errors.New("exists"))).To(MatchError(ContainSubstring("the replay of POST /e was refused")))
	g.Expect(sameAnswer(Replay{Code: 422}, 422, refused)).To(Succeed(), "a locked template refuses the dry-run again")
	g.Expect(sameAnswer(Replay{Code: 422, Method: "PATCH", URI: "/t"}, 200, nil)).To(MatchError(ContainSubstring("got 200, the add-on got 422")))
}

// TestNewFloor: the ratios to the writes, and to the writes and dry-runs.
func TestNewFloor(t *testing.T) {
	g := NewWithT(t)
	f := newFloor(60, 12500, 40, 5000, 10)
	g.Expect(f.Ratio).To(BeNumerically("~", 1.5))
	g.Expect(f.RequestRatio).To(BeNumerically("~", 1.2))
	g.Expect(newFloor(60, 0, 0, 0, 0).Ratio).To(BeZero(), "no division by a zero floor")
	r := Result{Floor: f}
	g.Expect(floorCell(r)).To(Equal("40s (1.50×, 12500 writes) + 10s for 5000 dry-runs (1.20×)"))
	r.Floor = newFloor(60, 12500, 40, 0, 0)
	g.Expect(floorCell(r)).To(Equal("40s (1.50×, 12500 writes)"))
}
