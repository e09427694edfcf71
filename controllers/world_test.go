package controllers_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/controllers"
	"github.com/templatedrift/template-drift-controller/internal/apply"
	"github.com/templatedrift/template-drift-controller/internal/release"
	"github.com/templatedrift/template-drift-controller/internal/testenv"
)

// A world is one test's HelmRelease, its stored Helm release and the live
// objects, in a namespace of its own, with a reconciler whose target client
// counts writes and can be told to crash. This file builds it; the target
// client is in world_target_test.go, and what tests read back is in
// world_read_test.go.

// scenario is what a world holds: the HelmRelease, the stored release and
// the live objects. How the add-on reaches them is an option of newWorld.
type scenario struct {
	// annotations on the HelmRelease (mode, strategy).
	annotations map[string]string
	// live renders the live objects (after the pivot); release the stored manifest.
	live, release values
	// status ("deployed" when empty) and applyMethod of the stored release.
	status, applyMethod string
	// hrMutate edits the HelmRelease before it is created.
	hrMutate func(*helmv2.HelmRelease)
	// liveMutate edits each live object before it is created.
	liveMutate func(*unstructured.Unstructured)
}

// reach is how the add-on reaches the world's objects; the zero value is
// the suite's API server through the counting target client.
type reach struct {
	// cluster holds the release and the live objects; nil is env itself.
	cluster *testenv.Env
	// ownNamespace sets spec.targetNamespace to the HelmRelease's own
	// namespace, which makes the release name "<namespace>-cluster".
	ownNamespace bool
	// production resolves the target as production does (spec.kubeConfig,
	// impersonation) instead of through the counting, crashing client;
	// defaultServiceAccount is then --default-service-account (the lockdown).
	production            bool
	defaultServiceAccount string
	// cached reads the target through informers, as production reads the
	// local cluster as the controller's own identity (see cachedReader).
	cached bool
	// reviewed (with production) serves an impersonated account's reads
	// from informers where its access reviews allow (target.ReviewedReader).
	reviewed bool
}

// option changes how the add-on reaches a world.
type option func(*reach)

// onCluster puts the release and its objects on another API server (the
// HelmRelease stays on env).
func onCluster(e *testenv.Env) option { return func(r *reach) { r.cluster = e } }

// inOwnNamespace targets the HelmRelease's own namespace.
func inOwnNamespace() option { return func(r *reach) { r.ownNamespace = true } }

// asProduction resolves targets as production does, with
// defaultServiceAccount as --default-service-account ("" for none).
func asProduction(defaultServiceAccount string) option {
	return func(r *reach) { r.production, r.defaultServiceAccount = true, defaultServiceAccount }
}

// reviewedReads resolves targets as production does with
// defaultServiceAccount, and serves the account's reads from informers
// where a SelfSubjectAccessReview allows them.
func reviewedReads(defaultServiceAccount string) option {
	return func(r *reach) {
		r.production, r.defaultServiceAccount, r.reviewed = true, defaultServiceAccount, true
	}
}

// cachedReads reads the target through informers.
func cachedReads() option { return func(r *reach) { r.cached = true } }

// errCrash is what the fault-injecting client returns instead of a write:
// the controller "dies" right there.
var errCrash = errors.New("injected crash")

// world is one scenario set up in its own namespace.
type world struct {
	t   *testing.T
	g   Gomega
	ctx context.Context
	ns  string
	hr  *helmv2.HelmRelease
	rel testenv.Release
	// tgt is the cluster that holds the release (env unless onCluster).
	tgt      *testenv.Env
	r        *controllers.HelmReleaseReconciler
	recorder *events.FakeRecorder
	// lastErr is what the last reconcile returned.
	lastErr error

	// targetClient counts the writes and dry-runs of the add-on and
	// injects faults into them; readCounts counts its reads of a cached
	// world.
	targetClient
	readCounts
}

var nsCounter atomic.Int32

// newWorld creates the namespace, the live objects, the stored release and
// the HelmRelease of sc, and the reconciler that serves them.
func newWorld(t *testing.T, sc scenario, opts ...option) *world {
	t.Helper()
	var how reach
	for _, o := range opts {
		o(&how)
	}
	w := &world{t: t, g: NewWithT(t), ctx: context.Background(), ns: namespaceFor(t.Name()), tgt: env}
	w.failAfter.Store(-1)
	if how.cluster != nil {
		w.tgt = how.cluster
		w.createNamespace(w.tgt)
	}
	w.createNamespace(env)
	w.createLive(sc, how)
	w.createHelmRelease(sc, how)
	w.r = w.reconciler(how)
	return w
}

func (w *world) createNamespace(e *testenv.Env) {
	w.g.Expect(e.Client.Create(w.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: w.ns}})).To(Succeed())
}

// createLive creates the live objects as the release's owner and records
// the release to store.
func (w *world) createLive(sc scenario, how reach) {
	status := sc.status
	if status == "" {
		status = "deployed"
	}
	name := "cluster"
	if how.ownNamespace {
		name = release.Name(&helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Name: "cluster"}, Spec: helmv2.HelmReleaseSpec{TargetNamespace: w.ns}})
	}
	w.rel = testenv.Release{Name: name, Namespace: w.ns, Version: 1, Status: status, ApplyMethod: sc.applyMethod, Manifest: render(sc.release)}
	w.g.Expect(testenv.CreateLive(w.ctx, w.tgt.Client, w.ns, name, render(sc.live), sc.liveMutate)).To(Succeed())
}

// createHelmRelease creates the HelmRelease, stores its release as Helm
// would, and records the release in the HelmRelease's history.
func (w *world) createHelmRelease(sc scenario, how reach) {
	hr := &helmv2.HelmRelease{
		ObjectMeta: metav1.ObjectMeta{Name: "cluster", Namespace: w.ns, Annotations: sc.annotations},
		Spec: helmv2.HelmReleaseSpec{
			Interval: metav1.Duration{Duration: time.Minute},
			Chart: &helmv2.HelmChartTemplate{Spec: helmv2.HelmChartTemplateSpec{
				Chart: "cluster", SourceRef: helmv2.CrossNamespaceObjectReference{Kind: "HelmRepository", Name: "charts"},
			}},
		},
	}
	if how.ownNamespace {
		hr.Spec.TargetNamespace = w.ns
	}
	if sc.hrMutate != nil {
		sc.hrMutate(hr)
	}
	w.g.Expect(env.Client.Create(w.ctx, hr)).To(Succeed())
	w.g.Expect(testenv.StoreRelease(w.ctx, w.tgt, w.rel)).To(Succeed())
	w.g.Expect(testenv.SetHistory(w.ctx, env.Client, hr, w.rel)).To(Succeed())
	w.hr = hr
}

// namespaceFor turns a test name into a unique DNS-1123 label.
func namespaceFor(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	ns := fmt.Sprintf("t%d-%s", nsCounter.Add(1), b.String())
	if len(ns) > 60 {
		ns = ns[:60]
	}
	return strings.TrimRight(ns, "-")
}

func merge(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// reconcile runs one pass and returns the writes it made to the target.
// A pass may fail (it then returns its error, for the rate limiter's
// back-off), but only after reporting CorrectionFailed: an error with no
// condition would leave the user blind.
//
// A pass that lost a write race (apply.ErrConflict) is run again, as the
// workqueue would run it after its back-off: the real Cluster API and
// Metal3 controllers write the objects of a world just made (owner
// references, CAPM3's finalizer), and every write of a pass is safe to
// repeat. TestConflictIsRetriedQuietly covers the lost race itself.
func (w *world) reconcile() int {
	w.t.Helper()
	before := w.writes.Load()
	var err error
	for pass := 1; pass <= 8; pass++ {
		_, err = w.r.Reconcile(w.ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(w.hr)})
		if !errors.Is(err, apply.ErrConflict) {
			break
		}
		// The workqueue's back-off, shortened: growing, so that an informer
		// that lags on a loaded machine (a real manager's write the cache
		// has not seen yet) catches up, about 3.6 s in all.
		time.Sleep(time.Duration(pass) * 100 * time.Millisecond)
	}
	w.lastErr = err
	if err != nil {
		c := w.condition()
		w.g.Expect(c).NotTo(BeNil(), "a failed pass reports it: %v", err)
		w.g.Expect(c.Reason).To(Equal(api.CorrectionFailedReason), "a failed pass reports it: %v", err)
	}
	return int(w.writes.Load() - before)
}
