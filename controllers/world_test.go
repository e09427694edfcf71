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
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/controllers"
	"github.com/templatedrift/template-drift-controller/internal/apply"
	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/pipeline"
	"github.com/templatedrift/template-drift-controller/internal/release"
	"github.com/templatedrift/template-drift-controller/internal/target"
	"github.com/templatedrift/template-drift-controller/internal/testenv"
)

// A world is one test's HelmRelease, its stored Helm release and the live
// objects, in a namespace of its own, with a reconciler whose target client
// counts writes and can be told to crash. This file builds it; the target
// client is in world_target_test.go, and what tests read back is in
// world_read_test.go.

// scenario is what a world holds, and how the add-on reaches it.
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
	// reads is how the add-on reaches the objects, as account (production
	// resolution's --default-service-account; "" for none).
	reads   reads
	account string
	// cluster holds the release and the live objects; nil is env itself
	// (the HelmRelease is always on env).
	cluster *testenv.Env
	// budget is the rollout budget the world's passes share with others
	// (nil: no limit).
	budget *pipeline.RolloutBudget
}

// reads is how the add-on reaches a world's objects.
type reads int

const (
	// throughTestClient is the suite's API server through the counting,
	// crashing target client.
	throughTestClient reads = iota
	// throughInformers is the same client, read through informers, as
	// production reads the local cluster as the controller's own identity.
	throughInformers
	// asProduction resolves the target as production does
	// (spec.kubeConfig, impersonation of the account).
	asProduction
	// asReviewed resolves as production does, and serves the account's
	// reads from informers where its access reviews allow
	// (target.ReviewedReader).
	asReviewed
)

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
	// tgt is the cluster that holds the release (env unless scenario.cluster).
	tgt      *testenv.Env
	r        *controllers.HelmReleaseReconciler
	recorder *events.FakeRecorder
	// lastErr is what the last reconcile returned.
	lastErr error
	// answers remembers the server's answers to the pass's dry-runs.
	answers *target.DryRunMemo
	// informers are what a world read through informers reads from, and
	// liveKinds the kinds of its live objects.
	informers client.Reader
	liveKinds []schema.GroupVersionKind

	// targetClient counts the writes and dry-runs of the add-on and
	// injects faults into them; readCounts counts its reads of a cached
	// world.
	targetClient
	readCounts
}

var nsCounter atomic.Int32

// newWorld creates the namespace, the live objects, the stored release and
// the HelmRelease of sc, and the reconciler that serves them.
func newWorld(t *testing.T, sc scenario) *world {
	t.Helper()
	w := &world{t: t, g: NewWithT(t), ctx: context.Background(), ns: namespaceFor(t.Name()), tgt: env}
	w.failAfter.Store(-1)
	if sc.cluster != nil {
		w.tgt = sc.cluster
		w.createNamespace(w.tgt)
	}
	w.createNamespace(env)
	w.hr = w.helmRelease(sc)
	w.createLive(sc)
	w.createHelmRelease()
	w.r = w.reconciler(sc)
	return w
}

func (w *world) createNamespace(e *testenv.Env) {
	w.g.Expect(e.Client.Create(w.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: w.ns}})).To(Succeed())
}

// helmRelease is the HelmRelease of sc, not created yet: the release
// name follows from it.
func (w *world) helmRelease(sc scenario) *helmv2.HelmRelease {
	hr := &helmv2.HelmRelease{
		ObjectMeta: metav1.ObjectMeta{Name: "cluster", Namespace: w.ns, Annotations: sc.annotations},
		Spec: helmv2.HelmReleaseSpec{
			Interval: metav1.Duration{Duration: time.Minute},
			Chart: &helmv2.HelmChartTemplate{Spec: helmv2.HelmChartTemplateSpec{
				Chart: "cluster", SourceRef: helmv2.CrossNamespaceObjectReference{Kind: "HelmRepository", Name: "charts"},
			}},
		},
	}
	if sc.hrMutate != nil {
		sc.hrMutate(hr)
	}
	return hr
}

// createLive creates the live objects as the release's owner and records
// the release to store.
func (w *world) createLive(sc scenario) {
	status := sc.status
	if status == "" {
		status = "deployed"
	}
	name := release.Name(w.hr)
	w.rel = testenv.Release{Name: name, Namespace: w.ns, Version: 1, Status: status, ApplyMethod: sc.applyMethod, Manifest: render(sc.release)}
	w.g.Expect(testenv.CreateLive(w.ctx, w.tgt.Client, w.ns, name, render(sc.live), sc.liveMutate)).To(Succeed())
	objs, err := manifest.Split(render(sc.live), w.ns, 0)
	w.g.Expect(err).NotTo(HaveOccurred())
	seen := map[schema.GroupVersionKind]bool{}
	for _, o := range objs {
		if gvk := o.GroupVersionKind(); !seen[gvk] {
			seen[gvk] = true
			w.liveKinds = append(w.liveKinds, gvk)
		}
	}
}

// createHelmRelease creates the HelmRelease, stores its release as Helm
// would, and records the release in the HelmRelease's history.
func (w *world) createHelmRelease() {
	w.g.Expect(env.Client.Create(w.ctx, w.hr)).To(Succeed())
	w.g.Expect(testenv.StoreRelease(w.ctx, w.tgt, w.rel)).To(Succeed())
	w.g.Expect(testenv.SetHistory(w.ctx, env.Client, w.hr, w.rel)).To(Succeed())
}

// inOwnNamespace targets the HelmRelease's own namespace, which makes the
// release name "<namespace>-cluster".
func inOwnNamespace(hr *helmv2.HelmRelease) { hr.Spec.TargetNamespace = hr.Namespace }

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

// reconcile runs one pass, as the workqueue would, and returns the writes
// it made to the target. A pass may fail (it then returns its error, for
// the rate limiter's back-off), but only after reporting CorrectionFailed:
// an error with no condition would leave the user blind.
//
// A pass that lost a write race (apply.ErrConflict) reports nothing and is
// run again, as the workqueue runs it: the real Cluster API and Metal3
// managers write the objects of a world (owner references, finalizers,
// status), and every write carries the resourceVersion it read. The next
// pass reads afresh: live, or from informers once they hold what the
// server holds (caughtUp). A pass that loses maxRaces races in a row fails
// the test. TestConflictIsRetriedQuietly covers the lost race itself.
func (w *world) reconcile() int {
	w.t.Helper()
	before := w.writes.Load()
	var err error
	for race := 0; ; race++ {
		_, err = w.r.Reconcile(w.ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(w.hr)})
		if !errors.Is(err, apply.ErrConflict) {
			break
		}
		w.g.Expect(race).To(BeNumerically("<", maxRaces), "the pass kept losing write races: %v", err)
		w.caughtUp()
	}
	w.lastErr = err
	if err != nil {
		c := w.condition()
		w.g.Expect(c).NotTo(BeNil(), "a failed pass reports it: %v", err)
		w.g.Expect(c.Reason).To(Equal(api.CorrectionFailedReason), "a failed pass reports it: %v", err)
	}
	return int(w.writes.Load() - before)
}

// maxRaces bounds the write races one reconcile may lose in a row: a
// manager writes an object once or twice after a change, not forever.
const maxRaces = 5

// caughtUp waits, for a world read through informers, until they hold
// every object of the world's kinds at the resourceVersion the server
// has; a world read live is always caught up.
func (w *world) caughtUp() {
	w.t.Helper()
	if w.informers == nil {
		return
	}
	w.g.Eventually(func(g Gomega) {
		for _, gvk := range w.liveKinds {
			live, cached := &unstructured.UnstructuredList{}, &unstructured.UnstructuredList{}
			live.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
			cached.SetGroupVersionKind(live.GroupVersionKind())
			g.Expect(w.tgt.Client.List(w.ctx, live, client.InNamespace(w.ns))).To(Succeed())
			g.Expect(w.informers.List(w.ctx, cached, client.InNamespace(w.ns))).To(Succeed())
			g.Expect(versions(cached.Items)).To(Equal(versions(live.Items)), "%s", gvk.Kind)
		}
	}, 10*time.Second, 20*time.Millisecond).Should(Succeed())
}

// versions maps objects' names to their resourceVersions.
func versions(objs []unstructured.Unstructured) map[string]string {
	out := map[string]string{}
	for _, o := range objs {
		out[o.GetName()] = o.GetResourceVersion()
	}
	return out
}
