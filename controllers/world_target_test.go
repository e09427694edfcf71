package controllers_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/templatedrift/template-drift-controller/controllers"
	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/pipeline"
	"github.com/templatedrift/template-drift-controller/internal/release"
	"github.com/templatedrift/template-drift-controller/internal/report"
	"github.com/templatedrift/template-drift-controller/internal/target"
	"github.com/templatedrift/template-drift-controller/internal/testenv"
)

// targetClient wraps the client a world's add-on writes with: it counts
// the real writes (dry-runs apart) and can crash instead of one.
type targetClient struct {
	writes    atomic.Int32
	dryRuns   atomic.Int32 // dry-run creates and patches sent to the target
	failAfter atomic.Int32 // crash on the write after this many; -1 never
	// beforeDelete, when set, runs before each delete the add-on makes, to
	// change the world between the add-on's checks and its write.
	beforeDelete func(client.Object)
	// afterWrite, when set, runs after each write that succeeded, with the
	// object written: a test holds a pass between two writes with it.
	afterWrite func(client.Object)
	// onDryRun, when set, runs before each dry-run the add-on sends: a
	// test changes the world between the pass's reads and its writes.
	onDryRun func()
	// deleteErrs records what each delete of the add-on returned.
	deleteErrs []error
}

// write makes one real write and counts it once it succeeded (a write that
// lost a race to a Cluster API or Metal3 controller is no write), or
// crashes instead when told to.
func (tc *targetClient) write(o client.Object, do func() error) error {
	if f := tc.failAfter.Load(); f >= 0 && tc.writes.Load() >= f {
		return errCrash
	}
	if err := do(); err != nil {
		return err
	}
	tc.writes.Add(1)
	if tc.afterWrite != nil {
		tc.afterWrite(o)
	}
	return nil
}

// wrap returns c with every write going through tc.
func (tc *targetClient) wrap(c client.WithWatch) client.WithWatch {
	return interceptor.NewClient(c, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.CreateOption) error {
			co := &client.CreateOptions{}
			co.ApplyOptions(opts)
			if len(co.DryRun) > 0 {
				tc.dryRuns.Add(1)
				if tc.onDryRun != nil {
					tc.onDryRun()
				}
				return c.Create(ctx, o, opts...)
			}
			return tc.write(o, func() error { return c.Create(ctx, o, opts...) })
		},
		Update: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.UpdateOption) error {
			return tc.write(o, func() error { return c.Update(ctx, o, opts...) })
		},
		Delete: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.DeleteOption) error {
			if tc.beforeDelete != nil {
				tc.beforeDelete(o)
			}
			err := tc.write(o, func() error { return c.Delete(ctx, o, opts...) })
			tc.deleteErrs = append(tc.deleteErrs, err)
			return err
		},
		Patch: func(ctx context.Context, c client.WithWatch, o client.Object, p client.Patch, opts ...client.PatchOption) error {
			po := &client.PatchOptions{}
			po.ApplyOptions(opts)
			if len(po.DryRun) > 0 {
				tc.dryRuns.Add(1)
				if tc.onDryRun != nil {
					tc.onDryRun()
				}
				return c.Patch(ctx, o, p, opts...)
			}
			return tc.write(o, func() error { return c.Patch(ctx, o, p, opts...) })
		},
	})
}

// recordingConfig is env's config with every request recorded in
// w.asAccount.
func (w *world) recordingConfig() *rest.Config {
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			w.asAccount.Lock()
			w.asAccount.requests = append(w.asAccount.requests, r.Method+" "+r.URL.Path)
			w.asAccount.Unlock()
			return rt.RoundTrip(r)
		})
	})
	return cfg
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// staticTarget resolves every HelmRelease to one target.
type staticTarget struct{ t *target.Target }

func (s staticTarget) For(context.Context, *helmv2.HelmRelease) (*target.Target, error) {
	return s.t, nil
}

// reconciler builds the controller. Its target is the world's cluster
// through the counting client, read through informers, or resolved as
// production resolves it, as sc.reads says.
func (w *world) reconciler(sc scenario) *controllers.HelmReleaseReconciler {
	cs, err := kubernetes.NewForConfig(w.tgt.Config)
	w.g.Expect(err).NotTo(HaveOccurred())
	kinds, err := manifest.ParseKinds(manifest.DefaultTemplateKinds)
	w.g.Expect(err).NotTo(HaveOccurred())
	w.recorder = events.NewFakeRecorder(100)
	w.answers = &target.DryRunMemo{}
	counted := w.wrap(w.tgt.Client)
	static := &target.Target{Client: w.answers.Writes(counted, "test"), DryRuns: w.answers.DryRuns(counted, "test"), Secrets: cs.CoreV1(), Key: "test"}
	var targets pipeline.TargetResolver = staticTarget{t: static}
	switch sc.reads {
	case throughTestClient:
	case throughInformers:
		static.Reader = w.cachedReader()
	case asProduction, asReviewed:
		tg := &target.Targets{Local: env.Config, Reader: env.Client, Scheme: testenv.Scheme(),
			DefaultServiceAccount: sc.account, DryRunMemo: w.answers}
		if sc.reads == asReviewed {
			// As under the chart's lockdown: the controller may not
			// read Secrets, so its informers hold none.
			cached := w.cachedReader()
			cached.SecretMetadata = false
			tg.Cached, tg.ReviewTTL, tg.Local = cached, 5*time.Minute, w.recordingConfig()
		}
		targets = tg
	}
	return &controllers.HelmReleaseReconciler{
		Client: env.Client,
		Engine: &pipeline.Engine{Kinds: kinds, Releases: release.NewReader(manifest.DefaultMaxManifestBytes), MaxManifestBytes: manifest.DefaultMaxManifestBytes,
			DeleteWait: 5 * time.Second, Targets: targets, Budget: sc.budget},
		Reporter:       &report.Writer{Client: env.Client, Events: w.recorder},
		ResyncInterval: 10 * time.Minute,
	}
}
