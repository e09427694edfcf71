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

// memory is the memory scenario's fault. Once the fleet has converged (so
// that the figures before and after are both of a converged fleet), it
// records the controller's memory, starts sampling it, and has each
// rewriter rewrite its kubeconfig Secret cfg.Rewrites times, each time
// with a new client certificate of the same user, so that the controller
// builds a new client (and, with new TLS credentials, a new transport) for
// each version it sees, and each time changes an annotation of its
// HelmRelease, as a hostile tenant would to ask for a pass. Meanwhile every
// large release is upgraded once more (revision 3, new random data), so
// that the controller reads it.
func (r *run) memory(ctx context.Context) error {
	certs := "new client cert each time"
	if !r.cfg.RewriteCerts {
		certs = "same client cert"
	}
	r.res.Fault = fmt.Sprintf("%d tenants rewrite their kubeconfig Secret %d times each (%s, every %s or slower); %d releases with %d KiB of random values and hook, each upgraded once",
		r.cfg.Rewriters, r.cfg.Rewrites, certs, r.cfg.RewriteEvery, r.cfg.Large, largeRaw>>10)
	start := time.Now()
	if err := r.waitConverged(ctx); err != nil {
		r.logf("%s: the fleet did not converge before the fault (%v): the figures before are of a fleet converging", r.scenario, err)
	} else {
		r.logf("%s: the fleet converged in %s before the fault", r.scenario, time.Since(start).Round(time.Second))
	}
	pid := r.controller.PID()
	m := r.res.Memory
	m.Before = r.memoryPoint(ctx, pid, "before")
	r.sampler = harness.StartSampler(pid, sampleEvery)
	cs, err := kubernetes.NewForConfig(r.env.Config)
	if err != nil {
		return fmt.Errorf("failed to create a clientset: %w", err)
	}
	f := &memoryFault{r: r}
	g, gctx := errgroup.WithContext(ctx)
	for i := range r.cfg.Rewriters {
		g.Go(func() error { return f.rewrite(gctx, i) })
	}
	g.Go(func() error { return f.upgradeAll(gctx, cs) })
	err = g.Wait()
	m.Rewrites, m.LargeRewrites = int(f.rewrites.Load()), int(f.upgrades.Load())
	r.samplePeak()
	r.logf("%s: %d kubeconfig rewrites and %d large upgrades in %s", r.scenario, m.Rewrites, m.LargeRewrites, time.Since(start).Round(time.Second))
	return err
}

// waitConverged waits, up to the converge timeout, until every HelmRelease
// has converged.
func (r *run) waitConverged(ctx context.Context) error {
	return wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, r.cfg.ConvergeTimeout, true, func(ctx context.Context) (bool, error) {
		if r.controller.Exited() {
			return false, errors.New("the controller exited")
		}
		pending, err := r.pending(ctx)
		return err == nil && len(pending) == 0, nil
	})
}

// memoryFault is the memory scenario's hostile tenants at work.
type memoryFault struct {
	r *run
	// mu serializes the new client certificates: envtest writes each to the
	// same file, the user's kubeconfig.
	mu                 sync.Mutex
	rewrites, upgrades atomic.Int64
	// base is the controller's kubeconfig, read once, that rewrites
	// without new certificates rename.
	once    sync.Once
	base    []byte
	baseErr error
}

// renamed returns the controller's kubeconfig, with the certificate it
// started with, named name.
func (f *memoryFault) renamed(name string) ([]byte, error) {
	f.once.Do(func() { f.base, f.baseErr = os.ReadFile(f.r.kubeconfig) })
	if f.baseErr != nil {
		return nil, fmt.Errorf("failed to read the controller's kubeconfig: %w", f.baseErr)
	}
	return renameKubeconfig(f.base, name)
}

// kubeconfig returns a distinct kubeconfig named name for the controller's
// user, with a new client certificate (unless cfg.RewriteCerts is off).
// The certificate is the controller's user's so that the writes made
// through it are the controller's in the audit log, with their bodies, and
// checked for preconditions and scope.
func (f *memoryFault) kubeconfig(name string) ([]byte, error) {
	if !f.r.cfg.RewriteCerts {
		return f.renamed(name)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	path, err := f.r.env.AddUser(ControllerUser, []string{"system:masters"})
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("failed to read a new kubeconfig: %w", err)
	}
	return renameKubeconfig(b, name)
}

// rewrite has rewriter i rewrite its kubeconfig Secret cfg.Rewrites times,
// each followed by an annotation change on its HelmRelease.
func (f *memoryFault) rewrite(ctx context.Context, i int) error {
	c, ns := f.r.env.Client, rewriterNamespace(i)
	s := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: kubeConfigName}, s); err != nil {
		return fmt.Errorf("failed to read the kubeconfig Secret of %s: %w", ns, err)
	}
	hr := &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cluster"}}
	for n := 1; n <= f.r.cfg.Rewrites; n++ {
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
		if err := harness.Sleep(ctx, f.r.cfg.RewriteEvery-time.Since(start)); err != nil {
			return err
		}
	}
	return nil
}

// upgradeAll upgrades each large release once more, spread over the
// rewrites' expected time.
func (f *memoryFault) upgradeAll(ctx context.Context, cs kubernetes.Interface) error {
	cfg := f.r.cfg
	gap := max(cfg.RewriteEvery*time.Duration(cfg.Rewrites)/time.Duration(cfg.Large+1), 100*time.Millisecond)
	for i := range cfg.Large {
		if err := harness.Sleep(ctx, gap); err != nil {
			return err
		}
		ns := largeNamespace(i)
		_, desired, method := Manifests(CaseOf(i))
		if _, err := upgradeLarge(ctx, f.r.env.Client, cs.CoreV1().Secrets(ns), ns, desired, method, 3, uint64(cfg.Seed)+uint64(cfg.Large+i)); err != nil {
			return err
		}
		f.upgrades.Add(1)
	}
	return nil
}
