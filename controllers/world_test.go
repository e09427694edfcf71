package controllers_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/controllers"
	"github.com/templatedrift/template-drift-controller/internal/apply"
	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/pipeline"
	"github.com/templatedrift/template-drift-controller/internal/release"
	"github.com/templatedrift/template-drift-controller/internal/report"
	"github.com/templatedrift/template-drift-controller/internal/testenv"
)

// errCrash is what the fault-injecting client returns instead of a write:
// the controller "dies" right there.
var errCrash = errors.New("injected crash")

// scenario describes one test world.
type scenario struct {
	// annotations on the HelmRelease (mode, strategy).
	annotations map[string]string
	// live renders the live objects (after the pivot); release the stored manifest.
	live, release values
	// status and applyMethod of the stored release.
	status, applyMethod string
	// hrMutate edits the HelmRelease before it is created.
	hrMutate func(*helmv2.HelmRelease)
	// liveMutate edits each live object before it is created.
	liveMutate func(*unstructured.Unstructured)
	// target is the cluster the release deploys to; nil is env itself.
	target *testenv.Env
	// targetSelf sets spec.targetNamespace to the HelmRelease's own
	// namespace, which makes the release name "<namespace>-cluster".
	targetSelf bool
	// realTargets resolves the target as production does (spec.kubeConfig,
	// impersonation) instead of the counting, crash-injecting client.
	realTargets bool
	// defaultServiceAccount is --default-service-account (the lockdown) of
	// real targets.
	defaultServiceAccount string
	// cached reads the target through informers, as production reads the
	// local cluster as the controller's own identity (see cachedReader).
	cached bool
}

// world is one scenario set up in its own namespace, with a reconciler whose
// target client counts writes and can be told to crash.
type world struct {
	t   *testing.T
	g   Gomega
	ctx context.Context
	ns  string
	hr  *helmv2.HelmRelease
	rel testenv.Release
	// tgt is the target cluster (env unless the scenario names another).
	tgt *testenv.Env

	writes    atomic.Int32
	dryRuns   atomic.Int32 // dry-run creates and patches sent to the target
	failAfter atomic.Int32 // crash on the write after this many; -1 never
	recorder  *events.FakeRecorder
	r         *controllers.HelmReleaseReconciler
	// lastErr is what the last reconcile returned.
	lastErr error
	// beforeDelete, when set, runs before each delete the add-on makes, to
	// change the world between the add-on's checks and its write.
	beforeDelete func(client.Object)
	// deleteErrs records what each delete of the add-on returned.
	deleteErrs []error
	// liveReads counts the reads a cached world made live.
	liveReads atomic.Int32
	// cachedKinds records the kinds and versions a cached world read from
	// its informers: each is an informer holding every object of the kind.
	cachedKinds sync.Map
}

type staticTarget struct{ t *apply.Target }

func (s staticTarget) For(context.Context, *helmv2.HelmRelease) (*apply.Target, error) {
	return s.t, nil
}

var nsCounter atomic.Int32

func newWorld(t *testing.T, sc scenario) *world {
	t.Helper()
	w := &world{t: t, g: NewWithT(t), ctx: context.Background()}
	w.failAfter.Store(-1)
	w.ns = namespaceFor(t.Name())
	w.tgt = env
	if sc.target != nil {
		w.tgt = sc.target
		w.g.Expect(w.tgt.Client.Create(w.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: w.ns}})).To(Succeed())
	}
	w.g.Expect(env.Client.Create(w.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: w.ns}})).To(Succeed())

	if sc.status == "" {
		sc.status = "deployed"
	}
	relName := "cluster"
	if sc.targetSelf {
		relName = release.Name(&helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Name: "cluster"}, Spec: helmv2.HelmReleaseSpec{TargetNamespace: w.ns}})
	}
	w.rel = testenv.Release{Name: relName, Namespace: w.ns, Version: 1, Status: sc.status, ApplyMethod: sc.applyMethod, Manifest: render(sc.release)}
	w.g.Expect(testenv.CreateLive(w.ctx, w.tgt.Client, w.ns, relName, render(sc.live), sc.liveMutate)).To(Succeed())
	w.createHelmRelease(sc)
	w.r = w.reconciler(sc.cached)
	if sc.realTargets {
		w.r.Engine.Targets = &apply.Targets{Local: env.Config, Reader: env.Client, Scheme: testenv.Scheme(),
			DefaultServiceAccount: sc.defaultServiceAccount}
	}
	return w
}

func (w *world) createHelmRelease(sc scenario) {
	hr := &helmv2.HelmRelease{
		ObjectMeta: metav1.ObjectMeta{Name: "cluster", Namespace: w.ns, Annotations: sc.annotations},
		Spec: helmv2.HelmReleaseSpec{
			Interval: metav1.Duration{Duration: time.Minute},
			Chart: &helmv2.HelmChartTemplate{Spec: helmv2.HelmChartTemplateSpec{
				Chart: "cluster", SourceRef: helmv2.CrossNamespaceObjectReference{Kind: "HelmRepository", Name: "charts"},
			}},
		},
	}
	if sc.targetSelf {
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

// reconciler builds the controller with a target client that counts real
// writes (dry-runs excluded) and crashes when told to.
func (w *world) reconciler(cached bool) *controllers.HelmReleaseReconciler {
	// write makes one real write and counts it once it succeeded (a write
	// that lost a race to a Cluster API or Metal3 controller is no write),
	// or crashes instead when told to.
	write := func(do func() error) error {
		if f := w.failAfter.Load(); f >= 0 && w.writes.Load() >= f {
			return errCrash
		}
		if err := do(); err != nil {
			return err
		}
		w.writes.Add(1)
		return nil
	}
	c := interceptor.NewClient(w.tgt.Client, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.CreateOption) error {
			co := &client.CreateOptions{}
			co.ApplyOptions(opts)
			if len(co.DryRun) > 0 {
				w.dryRuns.Add(1)
				return c.Create(ctx, o, opts...)
			}
			return write(func() error { return c.Create(ctx, o, opts...) })
		},
		Update: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.UpdateOption) error {
			return write(func() error { return c.Update(ctx, o, opts...) })
		},
		Delete: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.DeleteOption) error {
			if w.beforeDelete != nil {
				w.beforeDelete(o)
			}
			err := write(func() error { return c.Delete(ctx, o, opts...) })
			w.deleteErrs = append(w.deleteErrs, err)
			return err
		},
		Patch: func(ctx context.Context, c client.WithWatch, o client.Object, p client.Patch, opts ...client.PatchOption) error {
			po := &client.PatchOptions{}
			po.ApplyOptions(opts)
			if len(po.DryRun) > 0 {
				w.dryRuns.Add(1)
				return c.Patch(ctx, o, p, opts...)
			}
			return write(func() error { return c.Patch(ctx, o, p, opts...) })
		},
	})
	cs, err := kubernetes.NewForConfig(w.tgt.Config)
	w.g.Expect(err).NotTo(HaveOccurred())
	kinds, err := manifest.ParseKinds(manifest.DefaultTemplateKinds)
	w.g.Expect(err).NotTo(HaveOccurred())
	w.recorder = events.NewFakeRecorder(100)
	target := &apply.Target{Client: c, Secrets: cs.CoreV1(), Key: "test"}
	if cached {
		target.Reader = w.cachedReader()
	}
	return &controllers.HelmReleaseReconciler{
		Client: env.Client,
		Engine: &pipeline.Engine{Kinds: kinds, Releases: release.NewReader(manifest.DefaultMaxManifestBytes), MaxManifestBytes: manifest.DefaultMaxManifestBytes,
			DeleteWait: 5 * time.Second, Targets: staticTarget{t: target}, Confirmations: &pipeline.Confirmations{}},
		Reporter:       &report.Writer{Client: env.Client, Events: w.recorder},
		ResyncInterval: 10 * time.Minute,
	}
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
	for pass := 0; pass < 5; pass++ {
		_, err = w.r.Reconcile(w.ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(w.hr)})
		if !errors.Is(err, apply.ErrConflict) {
			break
		}
		time.Sleep(100 * time.Millisecond) // the workqueue's back-off, shortened

	}
	w.lastErr = err
	if err != nil {
		c := w.condition()
		w.g.Expect(c).NotTo(BeNil(), "a failed pass reports it: %v", err)
		w.g.Expect(c.Reason).To(Equal(api.CorrectionFailedReason), "a failed pass reports it: %v", err)
	}
	return int(w.writes.Load() - before)
}

func (w *world) get(apiVersion, kind, name string) *unstructured.Unstructured {
	w.t.Helper()
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	w.g.Expect(w.tgt.Client.Get(w.ctx, client.ObjectKey{Namespace: w.ns, Name: name}, u)).To(Succeed(), "get %s %s", kind, name)
	return u
}

func (w *world) list(apiVersion, kind string) []unstructured.Unstructured {
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(schema.FromAPIVersionAndKind(apiVersion, kind+"List"))
	w.g.Expect(w.tgt.Client.List(w.ctx, l, client.InNamespace(w.ns))).To(Succeed())
	return l.Items
}

func (w *world) condition() *metav1.Condition {
	hr := &helmv2.HelmRelease{}
	w.g.Expect(env.Client.Get(w.ctx, client.ObjectKeyFromObject(w.hr), hr)).To(Succeed())
	return apimeta.FindStatusCondition(hr.Status.Conditions, api.TemplatesInSyncCondition)
}

// events drains the recorded events.
func (w *world) events() []string {
	var out []string
	for {
		select {
		case e := <-w.recorder.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

// versions snapshots what the add-on wrote in the namespace. The real
// Cluster API and Metal3 managers write these objects too (owner
// references, finalizers, status, the MachineDeployment revision), so a
// template's resourceVersion says nothing about the add-on: for each
// object, the snapshot holds the managedFields entries of the add-on's field
// manager, which every write of the add-on changes. The HelmRelease, which
// only the add-on's reporter writes here, is snapshot by resourceVersion.
func (w *world) versions() map[string]string {
	out := map[string]string{}
	for _, k := range [][2]string{
		{"infrastructure.cluster.x-k8s.io/v1beta1", "Metal3MachineTemplate"},
		{"infrastructure.cluster.x-k8s.io/v1beta1", "Metal3DataTemplate"},
		{"infrastructure.cluster.x-k8s.io/v1beta1", "LockedMachineTemplate"},
		{"cluster.x-k8s.io/v1beta2", "MachineDeployment"},
		{"controlplane.cluster.x-k8s.io/v1beta2", "KubeadmControlPlane"},
		{"controlplane.cluster.x-k8s.io/v1beta1", "RKE2ControlPlane"},
		{"bootstrap.cluster.x-k8s.io/v1beta2", "KubeadmConfigTemplate"},
	} {
		for _, o := range w.list(k[0], k[1]) {
			var ours []string
			for _, f := range o.GetManagedFields() {
				if f.Manager == api.ControllerName {
					ours = append(ours, fmt.Sprintf("%s@%s:%s", f.Operation, f.Time, f.FieldsV1))
				}
			}
			out[k[1]+"/"+o.GetName()] = strings.Join(ours, ";")
		}
	}
	for _, o := range w.list("helm.toolkit.fluxcd.io/v2", "HelmRelease") {
		out["HelmRelease/"+o.GetName()] = o.GetResourceVersion()
	}
	return out
}

// writtenByAddon reports whether the add-on's field manager ever wrote o.
func writtenByAddon(o *unstructured.Unstructured) bool {
	for _, f := range o.GetManagedFields() {
		if f.Manager == api.ControllerName {
			return true
		}
	}
	return false
}

func str(o *unstructured.Unstructured, path ...string) string {
	s, _, _ := unstructured.NestedString(o.Object, path...)
	return s
}
