package chaos

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/test/harness"
)

// MemoryInput is the memory scenario's.
type MemoryInput struct {
	Input
	// Rewrites is how many times each rewriter rewrites its kubeconfig
	// Secret: a hostile tenant that rewrites its kubeconfig in a loop.
	Rewrites int
}

// The memory scenario's hostile input besides in.Rewrites.
const (
	// rewriters is how many tenants deploy through a kubeconfig Secret and
	// rewrite it.
	rewriters = 4
	// rewriteEvery is the least time between two rewrites of one tenant, a
	// pace the API server on two shared cores takes besides the controller.
	rewriteEvery = 25 * time.Millisecond
)

// largeReleases is how many releases of the memory scenario store values
// and a hook of several hundred KiB: a tenth of the fleet.
func largeReleases(n int) int { return max(1, n/10) }

// MemorySpec adds releases that deploy through kubeconfig Secrets and
// releases with large values to the fleet, lets the fleet converge, then
// has the tenants rewrite their kubeconfigs while the large releases are
// upgraded, and samples the controller's memory throughout. Besides every
// scenario's invariants, its peak RSS must stay under half the chart's
// default memory limit (bounded-memory).
func MemorySpec(ctx context.Context, in MemoryInput) (res Result, err error) {
	m := &memoryRun{in: in, fig: &MemoryFigures{Rewriters: rewriters, Large: largeReleases(in.N)}}
	m.w = newWorld(in.Input, ScenarioMemory, worldOptions{})
	w := m.w
	defer func() {
		if m.sampler != nil {
			m.sampler.Stop()
		}
		w.stop(err)
	}()
	w.res.Memory = m.fig
	if err := w.setUp(ctx, m.createFleet); err != nil {
		return w.res, err
	}
	w.res.Fault = fmt.Sprintf("%d tenants rewrite their kubeconfig Secret %d times each (new client cert each time, every %s or slower); %d releases with %d KiB of random values and hook, each upgraded once",
		rewriters, in.Rewrites, rewriteEvery, m.fig.Large, largeRaw>>10)
	if err := w.step("inject the fault", func() error { return m.fault(ctx) }); err != nil {
		return w.res, err
	}
	w.faultsStopped(ctx)
	return w.conclude(ctx, checks{}, func([]Write) error { return m.check(ctx) })
}

// memoryRun is the memory scenario's state besides its world.
type memoryRun struct {
	w   *world
	in  MemoryInput
	fig *MemoryFigures
	// sampler samples the controller's memory from the fault through the
	// check.
	sampler *harness.Sampler
}

// fault waits until the fleet has converged (so that the figures before
// and after are both of a converged fleet), records the controller's
// memory, starts sampling it, and has each rewriter rewrite its kubeconfig
// Secret in.Rewrites times, each time with a new client certificate of the
// same user, so that the controller builds a new client (and, with new TLS
// credentials, a new transport) for each version it sees, and each time
// changes an annotation of its HelmRelease, as a hostile tenant would to
// ask for a pass. Meanwhile every large release is upgraded once more
// (revision 3, new random data), so that the controller reads it.
func (m *memoryRun) fault(ctx context.Context) error {
	w := m.w
	start := time.Now()
	if err := w.waitConverged(ctx); err != nil {
		w.in.Logf("%s: the fleet did not converge before the fault (%v): the figures before are of a fleet converging", w.name, err)
	} else {
		w.in.Logf("%s: the fleet converged in %s before the fault", w.name, time.Since(start).Round(time.Second))
	}
	pid := w.controller.PID()
	m.fig.Before = memoryPoint(ctx, w, pid, "before")
	m.sampler = harness.StartSampler(pid, sampleEvery)
	cs, err := kubernetes.NewForConfig(w.env.Config)
	if err != nil {
		return fmt.Errorf("failed to create a clientset: %w", err)
	}
	f := &memoryFault{m: m}
	g, gctx := errgroup.WithContext(ctx)
	for i := range rewriters {
		g.Go(func() error { return f.rewrite(gctx, i) })
	}
	g.Go(func() error { return f.upgradeAll(gctx, cs) })
	err = g.Wait()
	m.fig.Rewrites, m.fig.LargeRewrites = int(f.rewrites.Load()), int(f.upgrades.Load())
	w.samplePeak()
	w.in.Logf("%s: %d kubeconfig rewrites and %d large upgrades in %s", w.name, m.fig.Rewrites, m.fig.LargeRewrites, time.Since(start).Round(time.Second))
	return err
}

// waitConverged waits, up to the converge timeout, until every HelmRelease
// has converged.
func (w *world) waitConverged(ctx context.Context) error {
	return wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, convergeTimeout, true, func(ctx context.Context) (bool, error) {
		if w.controller.Exited() {
			return false, errors.New("the controller exited")
		}
		pending, err := w.pending(ctx)
		return err == nil && len(pending) == 0, nil
	})
}

// memoryFault is the memory scenario's hostile tenants at work.
type memoryFault struct {
	m *memoryRun
	// mu serializes the new client certificates: envtest writes each to the
	// same file, the user's kubeconfig.
	mu                 sync.Mutex
	rewrites, upgrades atomic.Int64
}

// kubeconfig returns a distinct kubeconfig named name for the controller's
// user, with a new client certificate.
// The certificate is the controller's user's so that the writes made
// through it are the controller's in the audit log, with their bodies, and
// checked for preconditions and scope.
func (f *memoryFault) kubeconfig(name string) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	path, err := f.m.w.env.AddUser(ControllerUser, []string{"system:masters"})
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("failed to read a new kubeconfig: %w", err)
	}
	return renameKubeconfig(b, name)
}

// rewrite has rewriter i rewrite its kubeconfig Secret in.Rewrites times,
// each followed by an annotation change on its HelmRelease.
func (f *memoryFault) rewrite(ctx context.Context, i int) error {
	c, ns := f.m.w.env.Client, rewriterNamespace(i)
	s := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: kubeConfigName}, s); err != nil {
		return fmt.Errorf("failed to read the kubeconfig Secret of %s: %w", ns, err)
	}
	hr := &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cluster"}}
	for n := 1; n <= f.m.in.Rewrites; n++ {
		start := time.Now()
		kc, err := f.kubeconfig(fmt.Sprintf("%s-%d", ns, n))
		if err != nil {
			return err
		}
		s.Data = map[string][]byte{kubeConfigKey: kc}
		// An update with the resourceVersion read: nothing else may write
		// the Secret (the controller least of all), so a conflict fails.
		if err := c.Update(ctx, s); err != nil {
			return fmt.Errorf("failed to rewrite the kubeconfig Secret of %s (%d): %w", ns, n, err)
		}
		patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, rewriteAnnotation, strconv.Itoa(n))
		if err := c.Patch(ctx, hr, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
			return fmt.Errorf("failed to annotate HelmRelease %s/cluster (%d): %w", ns, n, err)
		}
		f.rewrites.Add(1)
		if err := harness.Sleep(ctx, rewriteEvery-time.Since(start)); err != nil {
			return err
		}
	}
	return nil
}

// upgradeAll upgrades each large release once more, spread over the
// rewrites' expected time.
func (f *memoryFault) upgradeAll(ctx context.Context, cs kubernetes.Interface) error {
	large := f.m.fig.Large
	gap := max(rewriteEvery*time.Duration(f.m.in.Rewrites)/time.Duration(large+1), 100*time.Millisecond)
	for i := range large {
		if err := harness.Sleep(ctx, gap); err != nil {
			return err
		}
		ns := largeNamespace(i)
		_, desired, method := Manifests(CaseOf(i))
		if _, err := upgradeLarge(ctx, f.m.w.env.Client, cs.CoreV1().Secrets(ns), ns, desired, method, 3, uint64(f.m.in.Seed)+uint64(large+i)); err != nil {
			return err
		}
		f.upgrades.Add(1)
	}
	return nil
}
