package scale

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

// auditLine is one audit event as kube-apiserver logs it, trimmed.
func auditLine(stage, user, verb, resource, sub, received string) string {
	return auditLineURI(stage, user, verb, resource, sub, received, "/api/v1/namespaces/fleet-0001/secrets?limit=500")
}

func auditLineURI(stage, user, verb, resource, sub, received, uri string) string {
	ref := ""
	if resource != "" {
		ref = `,"objectRef":{"resource":"` + resource + `","subresource":"` + sub + `","namespace":"fleet-0001","name":"x","apiVersion":"v1"}`
	}
	return `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"1","stage":"` + stage +
		`","requestURI":"` + uri + `","verb":"` + verb + `","user":{"username":"` + user +
		`","groups":["system:masters"]}` + ref + `,"responseStatus":{"code":200},"requestReceivedTimestamp":"` + received +
		`","stageTimestamp":"` + received + `"}`
}

func TestCountRequests(t *testing.T) {
	g := NewWithT(t)
	lines := []string{
		auditLine("ResponseComplete", ControllerUser, "get", "secrets", "", "2026-01-01T00:00:01.000000Z"),
		auditLine("ResponseComplete", ControllerUser, "list", "secrets", "", "2026-01-01T00:00:01.500000Z"),
		auditLine("ResponseComplete", ControllerUser, "patch", "helmreleases", "status", "2026-01-01T00:00:02.000000Z"),
		auditLineURI("ResponseComplete", ControllerUser, "patch", "metal3machinetemplates", "", "2026-01-01T00:00:03.000000Z",
			"/apis/infrastructure.cluster.x-k8s.io/v1beta1/namespaces/fleet-0001/metal3machinetemplates/x?dryRun=All&fieldManager=t"),
		// Another user, another stage, outside both windows: not counted.
		auditLine("ResponseComplete", "admin", "get", "secrets", "", "2026-01-01T00:00:01.000000Z"),
		auditLine("ResponseStarted", ControllerUser, "watch", "secrets", "", "2026-01-01T00:00:01.000000Z"),
		auditLine("ResponseComplete", ControllerUser, "get", "secrets", "", "2026-01-01T00:00:09.000000Z"),
		// Discovery has no object: named by its path.
		auditLine("ResponseComplete", ControllerUser, "get", "", "", "2026-01-01T00:00:05.000000Z"),
	}
	path := filepath.Join(t.TempDir(), "audit.log")
	g.Expect(os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644)).To(Succeed())
	at := func(s float64) time.Time {
		return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(s * float64(time.Second)))
	}

	got, err := CountRequests(path, ControllerUser, Window{at(1), at(2)}, Window{at(2), at(6)})

	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got[0].Total).To(Equal(2), "the window's end is excluded")
	g.Expect(got[0].ByVerb).To(Equal(map[string]int{"get": 1, "list": 1}))
	g.Expect(got[0].Writes()).To(Equal(0))
	g.Expect(got[1].ByResource).To(Equal(map[string]int{"patch helmreleases/status": 1,
		"patch metal3machinetemplates (dry-run)": 1, "get /api/v1/namespaces/fleet-0001/secrets": 1}))
	g.Expect(got[1].ByVerb).To(Equal(map[string]int{"patch": 2, "get": 1}))
	g.Expect(got[1].Writes()).To(Equal(1), "a dry-run writes nothing")
	g.Expect(got[1].DryRuns()).To(Equal(1))
	g.Expect(got[1].WritesByResource()).To(Equal([]string{"patch helmreleases/status: 1"}))
	g.Expect(got[1].Discovery()).To(Equal(0), "a namespaced path is not discovery")
}

func TestDiscovery(t *testing.T) {
	g := NewWithT(t)
	r := Requests{ByResource: map[string]int{"get /apis": 3, "get /api": 1, "get /api/v1": 1,
		"get /apis/cluster.x-k8s.io/v1beta2": 2, "get /apis/cluster.x-k8s.io/v1beta2/namespaces/a/machinepools": 5,
		"list machinepools": 7, "get /openapi/v3": 1}}
	g.Expect(r.Discovery()).To(Equal(7))
}

func TestCountRequestsRefusesACorruptLog(t *testing.T) {
	g := NewWithT(t)
	path := filepath.Join(t.TempDir(), "audit.log")
	g.Expect(os.WriteFile(path, []byte("{not json\n"), 0o644)).To(Succeed())

	_, err := CountRequests(path, ControllerUser, Window{})

	g.Expect(err).To(MatchError(ContainSubstring("line 1")))
}

// TestAccessReviewsAreNoWrites: an access or rules review is a create that
// stores nothing, counted apart, never as a write.
func TestAccessReviewsAreNoWrites(t *testing.T) {
	g := NewWithT(t)
	r := Requests{Total: 5, ByResource: map[string]int{"create selfsubjectaccessreviews": 3, "create selfsubjectrulesreviews": 1, "list secrets": 1}}
	g.Expect(r.Writes()).To(Equal(0))
	g.Expect(r.AccessReviews()).To(Equal(4))
}
