package controllers_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/templatedrift/template-drift-controller/controllers"
	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/testenv"
)

// TestForbiddenKindsAreNotWatched: a kind the controller's identity may not
// list and watch is left out of the watches (a watch on it would never sync
// and would stop the manager).
func TestForbiddenKindsAreNotWatched(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "tdc-watch-test"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{"infrastructure.cluster.x-k8s.io"}, Resources: []string{"metal3machinetemplates"}, Verbs: []string{"list", "watch"}},
	}}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "tdc-watch-test"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "tdc-watch-test"},
		Subjects: []rbacv1.Subject{{Kind: "User", Name: "tdc-watch-test"}}}
	for _, o := range []client.Object{role, binding} {
		g.Expect(env.Client.Create(ctx, o)).To(Succeed())
		// Cluster-scoped: the shared control plane outlives the test.
		t.Cleanup(func() { _ = env.Client.Delete(context.Background(), o) })
	}
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "tdc-watch-test"}
	kinds, err := manifest.ParseKinds(manifest.DefaultTemplateKinds)
	g.Expect(err).NotTo(HaveOccurred())
	got, err := controllers.ResolveWatchKinds(ctx, cfg, kinds)
	g.Expect(err).NotTo(HaveOccurred())
	// The preferred version is watched: v1beta2 on CAPM3 v1.13.
	g.Expect(got.Watch).To(ConsistOf(schema.GroupVersionKind{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta2", Kind: "Metal3MachineTemplate"}))
	g.Expect(got.Forbidden).To(ContainElements(
		HaveField("Kind", "LockedMachineTemplate"), HaveField("Kind", "Metal3DataTemplate"), HaveField("Kind", "MachineDeployment")))
	g.Expect(got.Forbidden).NotTo(ContainElement(HaveField("Kind", "MachineSet")), "MachineSets are never watched")

	admin, err := controllers.ResolveWatchKinds(ctx, env.Config, kinds)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(admin.Forbidden).To(BeEmpty())
	g.Expect(admin.Watch).To(ContainElement(HaveField("Kind", "RKE2ControlPlane")))
}

// failFirst answers the first n requests whose path ends in path with
// code and a Status body of its reason, without sending them, as an API server that
// sheds load does; it counts the requests it failed.
type failFirst struct {
	next   http.RoundTripper
	path   string
	code   int
	reason metav1.StatusReason
	n      int
	mu     sync.Mutex
	failed int
}

func (f *failFirst) RoundTrip(req *http.Request) (*http.Response, error) {
	f.mu.Lock()
	fail := strings.HasSuffix(req.URL.Path, f.path) && f.failed < f.n
	if fail {
		f.failed++
	}
	f.mu.Unlock()
	if !fail {
		return f.next.RoundTrip(req)
	}
	body := fmt.Sprintf(`{"kind":"Status","apiVersion":"v1","status":"Failure","code":%d,"reason":"%s"}`, f.code, f.reason)
	return &http.Response{StatusCode: f.code, Header: http.Header{"Content-Type": []string{"application/json"}},
		Body: io.NopCloser(strings.NewReader(body)), Request: req}, nil
}

// TestResolveWatchKindsRetriesWhatMayPass: the controller resolves its
// watches once, at start, and exits if that fails; a 500 among its
// discovery and access reviews is retried, not fatal (the chaos matrix's
// lossy scenario found the controller exiting on one). A 403 is not
// retried.
func TestResolveWatchKindsRetriesWhatMayPass(t *testing.T) {
	kinds, err := manifest.ParseKinds(manifest.DefaultTemplateKinds)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		// path, code, reason and n: the first n requests to path fail with
		// code and reason.
		path   string
		code   int
		reason metav1.StatusReason
		n      int
		// wantErr is a substring of the error, or empty for success.
		wantErr string
		// wantFailed is how many requests were failed.
		wantFailed int
	}{
		{name: "500s on access reviews", path: "selfsubjectaccessreviews", code: http.StatusInternalServerError, reason: metav1.StatusReasonInternalError, n: 3, wantFailed: 3},
		{name: "a 500 on discovery", path: "/apis", code: http.StatusInternalServerError, reason: metav1.StatusReasonInternalError, n: 1, wantFailed: 1},
		{name: "a 503 on access reviews", path: "selfsubjectaccessreviews", code: http.StatusServiceUnavailable, reason: metav1.StatusReasonServiceUnavailable, n: 2, wantFailed: 2},
		{name: "a 403 is not retried", path: "selfsubjectaccessreviews", code: http.StatusForbidden, reason: metav1.StatusReasonForbidden, n: 5, wantErr: "failed to review access", wantFailed: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			f := &failFirst{path: tt.path, code: tt.code, reason: tt.reason, n: tt.n}
			cfg := rest.CopyConfig(env.Config)
			cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { f.next = rt; return f })
			got, err := controllers.ResolveWatchKinds(context.Background(), cfg, kinds)
			g.Expect(f.failed).To(Equal(tt.wantFailed))
			if tt.wantErr != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tt.wantErr)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got.Forbidden).To(BeEmpty())
			g.Expect(got.Watch).To(ContainElement(HaveField("Kind", "Metal3MachineTemplate")))
		})
	}
}

// TestRetryStartupBuildsTheManagerThroughALostDiscovery: building the
// manager maps the HelmRelease kind (a discovery); one 500 among those
// requests (a lost response, through the lossy proxy of `make chaos`)
// stopped the controller at start, with the error the chaos run logged.
// It is retried.
func TestRetryStartupBuildsTheManagerThroughALostDiscovery(t *testing.T) {
	g := NewWithT(t)
	f := &failFirst{path: "/apis", code: http.StatusInternalServerError, reason: metav1.StatusReasonInternalError, n: 1}
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { f.next = rt; return f })
	opts := ctrl.Options{Scheme: testenv.Scheme(), Metrics: metricsserver.Options{BindAddress: "0"},
		Cache: ctrlcache.Options{ByObject: map[client.Object]ctrlcache.ByObject{&helmv2.HelmRelease{}: {}}}}
	_, err := ctrl.NewManager(rest.CopyConfig(cfg), opts)
	g.Expect(err).To(MatchError(ContainSubstring("failed to get server groups")), "without a retry, one 500 fails the start")

	f.failed = 0
	var mgr ctrl.Manager
	err = controllers.RetryStartup(func() error {
		var err error
		mgr, err = ctrl.NewManager(cfg, opts)
		return err
	})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(f.failed).To(Equal(1))
	g.Expect(mgr).NotTo(BeNil())
}
