package scale

import (
	"encoding/json"
	"testing"

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
