package chaos

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/meta"
	"golang.org/x/sync/errgroup"
	helmv1 "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage"
	"helm.sh/helm/v4/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/templatedrift/template-drift-controller/internal/release"
	"github.com/templatedrift/template-drift-controller/internal/testenv"
	"github.com/templatedrift/template-drift-controller/test/scale"
)

// InvBoundedMemory is the memory scenario's own invariant: the
// controller's peak RSS (VmHWM) stays under half the chart's default memory
// limit, the room to spare issue 12 asks for.
const InvBoundedMemory = "bounded-memory"

const (
	// rewriterPrefix and largePrefix name the namespaces of the memory
	// scenario's releases, apart from the fleet's.
	rewriterPrefix = "memory-tenant-"
	largePrefix    = "memory-large-"
	// kubeConfigName is each rewriter's kubeconfig Secret, its kubeconfig
	// under the key "value", as Cluster API writes them.
	kubeConfigName = "kubeconfig"
	kubeConfigKey  = "value"
	// rewriteAnnotation is the annotation a rewriter changes on its
	// HelmRelease after each rewrite: the controller's predicate passes an
	// annotation change, so each rewrite asks for a pass.
	rewriteAnnotation = "chaos.templatedrift.io/rewrite"
	// chartValues holds the chart's default memory limit.
	chartValues = "charts/template-drift-controller/values.yaml"
	// sampleEvery is how often the controller's memory is sampled during
	// the fault and the convergence.
	sampleEvery = 250 * time.Millisecond
	// largeRaw is the random data of one large release, before base64: two
	// thirds in its values, one third in a hook. Random data does not
	// compress, so Helm's gzip keeps it and its base64 makes it 4/3: about
	// 800 KiB of data.release, under the 1 MiB a Secret may hold.
	largeRaw = 600 << 10
	// largeChunk is the random data of one value (one string of the values
	// map), so that decoding the values also builds a map of many strings.
	largeChunk = 4 << 10
	// secretLimit is the most a Secret's data may hold.
	secretLimit = 1 << 20
)

func rewriterNamespace(i int) string { return fmt.Sprintf("%s%d", rewriterPrefix, i) }
func largeNamespace(i int) string    { return fmt.Sprintf("%s%02d", largePrefix, i) }

// createMemoryFleet adds the memory scenario's releases to the fleet: the
// rewriters, whose HelmReleases reach the same API server through a
// kubeconfig Secret of their namespace (spec.kubeConfig.secretRef), and the
// large releases, whose stored revision 2 carries values and a hook of
// several hundred KiB. Both are ordinary drifted releases of the fleet's
// cases, which must converge; the run's N counts them too.
func (r *run) createMemoryFleet(ctx context.Context) error {
	base, err := os.ReadFile(r.kubeconfig)
	if err != nil {
		return fmt.Errorf("failed to read the controller's kubeconfig: %w", err)
	}
	cs, err := kubernetes.NewForConfig(r.env.Config)
	if err != nil {
		return fmt.Errorf("failed to create a clientset: %w", err)
	}
	var sizes []int
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(createWorkers)
	add := func(ns string, c Case, then func(ctx context.Context, ns, desired, method string) error) error {
		live, desired, method := Manifests(c)
		objs, err := ManifestObjects(ns, desired)
		if err != nil {
			return err
		}
		r.fleet.Cases[ns] = c
		r.fleet.Objects = append(r.fleet.Objects, objs...)
		g.Go(func() error {
			if err := scale.CreateRelease(gctx, r.env, ns, live, desired, method, r.cfg.Resync); err != nil {
				return err
			}
			return then(gctx, ns, desired, method)
		})
		return nil
	}
	for i := range r.cfg.Rewriters {
		kc, err := renameKubeconfig(base, rewriterNamespace(i)+"-0")
		if err != nil {
			return err
		}
		if err := add(rewriterNamespace(i), CaseOf(i), func(ctx context.Context, ns, _, _ string) error {
			return r.deployThroughKubeconfig(ctx, ns, kc)
		}); err != nil {
			return err
		}
	}
	for i := range r.cfg.Large {
		if err := add(largeNamespace(i), CaseOf(i), func(ctx context.Context, ns, desired, method string) error {
			n, err := upgradeLarge(ctx, r.env.Client, cs.CoreV1().Secrets(ns), ns, desired, method, 2, uint64(r.cfg.Seed)+uint64(i))
			mu.Lock()
			sizes = append(sizes, n)
			mu.Unlock()
			return err
		}); err != nil {
			return err
		}
	}
	err = g.Wait()
	r.added = r.cfg.Rewriters + r.cfg.Large
	r.res.Memory = &MemoryFigures{Rewriters: r.cfg.Rewriters, Large: r.cfg.Large}
	for _, n := range sizes {
		r.res.Memory.LargeStoredBytes = max(r.res.Memory.LargeStoredBytes, n)
	}
	return err
}

// deployThroughKubeconfig stores kc in the kubeconfig Secret of ns and
// points the HelmRelease of ns at it. The controller is not running yet, so
// its first pass already goes through the Secret.
func (r *run) deployThroughKubeconfig(ctx context.Context, ns string, kc []byte) error {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: kubeConfigName}, Data: map[string][]byte{kubeConfigKey: kc}}
	if err := r.env.Client.Create(ctx, s); err != nil {
		return fmt.Errorf("failed to create the kubeconfig Secret of %s: %w", ns, err)
	}
	hr := &helmv2.HelmRelease{}
	if err := r.env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cluster"}, hr); err != nil {
		return fmt.Errorf("failed to read HelmRelease %s/cluster: %w", ns, err)
	}
	base := hr.DeepCopy()
	hr.Spec.KubeConfig = &meta.KubeConfigReference{SecretRef: &meta.SecretKeyReference{Name: kubeConfigName, Key: kubeConfigKey}}
	if err := r.env.Client.Patch(ctx, hr, client.MergeFrom(base)); err != nil {
		return fmt.Errorf("failed to set spec.kubeConfig of HelmRelease %s/cluster: %w", ns, err)
	}
	return nil
}

// renameKubeconfig returns the kubeconfig base (inline credentials, as
// envtest writes them) with its current context's cluster, user and context
// named name: a distinct, valid kubeconfig for the same cluster.
func renameKubeconfig(base []byte, name string) ([]byte, error) {
	cfg, err := clientcmd.Load(base)
	if err != nil {
		return nil, fmt.Errorf("failed to parse the kubeconfig: %w", err)
	}
	cur := cfg.Contexts[cfg.CurrentContext]
	if cur == nil || cfg.Clusters[cur.Cluster] == nil || cfg.AuthInfos[cur.AuthInfo] == nil {
		return nil, fmt.Errorf("failed to rename the kubeconfig: its current context %q names no cluster or user", cfg.CurrentContext)
	}
	out := clientcmdapi.NewConfig()
	out.Clusters[name] = cfg.Clusters[cur.Cluster]
	out.AuthInfos[name] = cfg.AuthInfos[cur.AuthInfo]
	out.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name, Namespace: cur.Namespace}
	out.CurrentContext = name
	b, err := clientcmd.Write(*out)
	if err != nil {
		return nil, fmt.Errorf("failed to write the kubeconfig: %w", err)
	}
	return b, nil
}

// largePayload returns values and a hook that carry raw bytes of random
// data from seed, in base64: two thirds in the values (a map of strings of
// largeChunk bytes each), the rest in a ConfigMap hook. Random data does
// not compress, so the stored release keeps its size.
func largePayload(seed uint64, raw int) (map[string]any, *helmv1.Hook) {
	rng := rand.NewChaCha8([32]byte{byte(seed), byte(seed >> 8), byte(seed >> 16), byte(seed >> 24),
		byte(seed >> 32), byte(seed >> 40), byte(seed >> 48), byte(seed >> 56)})
	random := func(n int) string {
		b := make([]byte, n)
		_, _ = rng.Read(b) // ChaCha8.Read never fails
		return base64.StdEncoding.EncodeToString(b)
	}
	chunks := map[string]any{}
	inValues := raw * 2 / 3
	for i := 0; i*largeChunk < inValues; i++ {
		chunks[fmt.Sprintf("chunk-%04d", i)] = random(min(largeChunk, inValues-i*largeChunk))
	}
	hook := &helmv1.Hook{
		Name: "large-hook", Kind: "ConfigMap", Path: "cluster/templates/large-hook.yaml",
		Events: []helmv1.HookEvent{helmv1.HookPreUpgrade},
		Manifest: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: large-hook\n  annotations:\n    helm.sh/hook: pre-upgrade\n" +
			"data:\n  blob: " + random(raw-inValues) + "\n",
	}
	return map[string]any{"hostile": chunks}, hook
}

// largeRelease is revision version of the release of ns, deployed with
// manifest and apply method, carrying largePayload(seed, largeRaw).
func largeRelease(ns, manifest, method string, version int, seed uint64) *helmv1.Release {
	rel := testenv.Release{Name: "cluster", Namespace: ns, Version: version, Status: "deployed", ApplyMethod: method, Manifest: manifest}.HelmRelease()
	values, hook := largePayload(seed, largeRaw)
	rel.Config, rel.Hooks = values, []*helmv1.Hook{hook}
	return rel
}

// upgradeLarge stores a large revision version of the release of ns with
// Helm's Secrets driver and records it in its HelmRelease's history, as a
// helm-controller upgrade that kept the manifest would. It returns the
// size of the Secret's data.release.
func upgradeLarge(ctx context.Context, c client.Client, secrets corev1client.SecretInterface, ns, manifest, method string, version int, seed uint64) (int, error) {
	rel := largeRelease(ns, manifest, method, version, seed)
	if err := storage.Init(driver.NewSecrets(secrets)).Create(rel); err != nil {
		return 0, fmt.Errorf("failed to store revision %d of the large release of %s: %w", version, ns, err)
	}
	s, err := secrets.Get(ctx, release.SecretName("cluster", version), metav1.GetOptions{})
	if err != nil {
		return 0, fmt.Errorf("failed to read revision %d of the large release of %s: %w", version, ns, err)
	}
	if err := recordRelease(ctx, c, ns, rel); err != nil {
		return 0, err
	}
	return len(s.Data["release"]), nil
}

// recordRelease records rel as the latest snapshot of the HelmRelease of
// ns, the ones before it superseded, through the status subresource, with
// the digest helm-controller computes (testenv.SetHistory's, for a release
// that carries values and hooks: the digest covers them).
func recordRelease(ctx context.Context, c client.Client, ns string, rel *helmv1.Release) error {
	hr := &helmv2.HelmRelease{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: rel.Name}, hr); err != nil {
		return fmt.Errorf("failed to read HelmRelease %s/%s: %w", ns, rel.Name, err)
	}
	base := hr.DeepCopy()
	for _, s := range hr.Status.History {
		s.Status = "superseded"
	}
	hr.Status.History = append(helmv2.Snapshots{{
		APIVersion: helmv2.CurrentSnapshotAPIVersion,
		Name:       rel.Name, Namespace: rel.Namespace, Version: rel.Version, Status: string(rel.Info.Status),
		Digest:        release.SnapshotDigest(rel),
		ChartName:     rel.Chart.Metadata.Name,
		ChartVersion:  rel.Chart.Metadata.Version,
		ConfigDigest:  "sha256:0000000000000000000000000000000000000000000000000000000000000000",
		FirstDeployed: metav1.NewTime(rel.Info.FirstDeployed),
		LastDeployed:  metav1.NewTime(rel.Info.LastDeployed),
	}}, hr.Status.History...)
	if err := c.Status().Patch(ctx, hr, client.MergeFrom(base)); err != nil {
		return fmt.Errorf("failed to record revision %d in the history of HelmRelease %s/%s: %w", rel.Version, ns, rel.Name, err)
	}
	return nil
}

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
	r.sampler = startSampler(pid, sampleEvery)
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
		if err := scale.Sleep(ctx, f.r.cfg.RewriteEvery-time.Since(start)); err != nil {
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
		if err := scale.Sleep(ctx, gap); err != nil {
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

// checkMemory checks the memory scenario's own invariant, bounded-memory,
// and records the figures after convergence.
func (r *run) checkMemory(ctx context.Context) error {
	r.res.Checked = append(r.res.Checked, InvBoundedMemory)
	m := r.res.Memory
	pid := r.controller.PID()
	if r.sampler != nil {
		sm := r.sampler.stop()
		r.sampler = nil
		m.PeakSampledRSSBytes, m.PeakSockets, m.Samples = sm.peakRSS, sm.peakSockets, sm.samples
	}
	r.samplePeak()
	m.After = r.memoryPoint(ctx, pid, "after")
	clients, err := countRequests(r.auditLog, ControllerUser, pingPath)
	if err != nil {
		return err
	}
	m.ClientsBuilt = clients
	limit, err := chartMemoryLimit()
	if err != nil {
		return err
	}
	m.LimitBytes = limit
	if r.res.PeakRSSBytes == 0 {
		r.res.violate(InvBoundedMemory, "the controller's peak RSS could not be read")
	} else if r.res.PeakRSSBytes >= limit/2 {
		r.res.violate(InvBoundedMemory, fmt.Sprintf("peak RSS %d MiB, not under half the chart's default memory limit (%d MiB)",
			r.res.PeakRSSBytes>>20, limit>>20))
	}
	r.logf("%s: RSS %d → %d MiB, heap in use %d → %d MiB (live %d → %d MiB), goroutines %d → %d, sockets %d → %d; peak RSS %d MiB (sampled %d MiB), %d clients built for %d rewrites",
		r.scenario, m.Before.RSSBytes>>20, m.After.RSSBytes>>20, m.Before.HeapInuseBytes>>20, m.After.HeapInuseBytes>>20,
		m.Before.HeapAllocBytes>>20, m.After.HeapAllocBytes>>20,
		m.Before.Goroutines, m.After.Goroutines, m.Before.Sockets, m.After.Sockets, r.res.PeakRSSBytes>>20, m.PeakSampledRSSBytes>>20, clients, m.Rewrites)
	return nil
}

// chartMemoryLimit reads the chart's default resources.limits.memory.
func chartMemoryLimit() (int64, error) {
	root, err := testenv.RepoRoot()
	if err != nil {
		return 0, err
	}
	b, err := os.ReadFile(filepath.Join(root, chartValues))
	if err != nil {
		return 0, fmt.Errorf("failed to read the chart's values: %w", err)
	}
	return memoryLimit(b)
}

// memoryLimit parses resources.limits.memory from a chart's values.
func memoryLimit(values []byte) (int64, error) {
	var v struct {
		Resources struct {
			Limits struct {
				Memory string `json:"memory"`
			} `json:"limits"`
		} `json:"resources"`
	}
	if err := yaml.Unmarshal(values, &v); err != nil {
		return 0, fmt.Errorf("failed to parse the chart's values: %w", err)
	}
	if v.Resources.Limits.Memory == "" {
		return 0, errors.New("failed to find resources.limits.memory in the chart's values")
	}
	q, err := resource.ParseQuantity(v.Resources.Limits.Memory)
	if err != nil {
		return 0, fmt.Errorf("failed to parse resources.limits.memory %q of the chart's values: %w", v.Resources.Limits.Memory, err)
	}
	if q.Value() <= 0 {
		return 0, fmt.Errorf("failed to parse resources.limits.memory %q of the chart's values: not a positive size", v.Resources.Limits.Memory)
	}
	return q.Value(), nil
}

// sampler samples a process's resident memory and open sockets in a
// goroutine of its own, until stopped or the process is gone.
type sampler struct {
	done  chan struct{}
	quit  chan struct{}
	peaks samplerPeaks
}

// samplerPeaks are a sampler's largest figures.
type samplerPeaks struct {
	peakRSS     int64
	peakSockets int
	samples     int
}

func startSampler(pid int, every time.Duration) *sampler {
	s := &sampler{done: make(chan struct{}), quit: make(chan struct{})}
	go func() {
		defer close(s.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			m, err := scale.ReadMemory(pid)
			if err != nil {
				return // the process is gone
			}
			s.peaks.peakRSS = max(s.peaks.peakRSS, m.RSS)
			s.peaks.peakSockets = max(s.peaks.peakSockets, sockets(pid))
			s.peaks.samples++
			select {
			case <-s.quit:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

// stop stops the sampler and returns its figures.
func (s *sampler) stop() samplerPeaks {
	close(s.quit)
	<-s.done
	return s.peaks
}

// sockets counts pid's open sockets (0 when they cannot be read): each
// connection a client keeps, idle or not, is one.
func sockets(pid int) int {
	dir := filepath.Join("/proc", strconv.Itoa(pid), "fd")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range entries {
		if l, err := os.Readlink(filepath.Join(dir, e.Name())); err == nil && strings.HasPrefix(l, "socket:") {
			n++
		}
	}
	return n
}

// memoryPoint reads the controller's memory now: its RSS, its sockets, and
// from its metrics endpoint, after a garbage collection that its pprof
// handler runs, its heap and goroutines; the heap profile goes to
// heap-<name>.pb.gz in the run's folder, to tell what holds the heap (go
// tool pprof). What cannot be read stays 0.
func (r *run) memoryPoint(ctx context.Context, pid int, name string) MemoryPoint {
	var p MemoryPoint
	if m, err := scale.ReadMemory(pid); err == nil {
		p.RSSBytes = m.RSS
	}
	p.Sockets = sockets(pid)
	cmdline, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	addr := flagValue(cmdline, "--metrics-addr")
	if err != nil || addr == "" {
		r.logf("%s: cannot find the controller's metrics address: %v", r.scenario, err)
		return p
	}
	g, err := scrapeAfterGC(ctx, addr, filepath.Join(r.dir, "heap-"+name+".pb.gz"))
	if err != nil {
		r.logf("%s: %v", r.scenario, err)
		return p
	}
	p.HeapInuseBytes, p.HeapAllocBytes, p.Goroutines = int64(g[heapInuse]), int64(g[heapAlloc]), int(g[goroutines])
	return p
}

// The Go collector's gauges the memory scenario reports.
const (
	heapInuse  = "go_memstats_heap_inuse_bytes"
	heapAlloc  = "go_memstats_heap_alloc_bytes"
	goroutines = "go_goroutines"
)

// scrapeAfterGC has the controller at addr run a garbage collection (its
// heap profile with gc=1, which Flux's pprof handlers serve on the metrics
// endpoint), so that the heap is the live heap and not the garbage of the
// last passes, writes the profile to profile, then scrapes its metrics for
// the gauges reported.
func scrapeAfterGC(ctx context.Context, addr, profile string) (map[string]float64, error) {
	c := &http.Client{Timeout: 10 * time.Second}
	get := func(path string) (*http.Response, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+path, nil)
		if err != nil {
			return nil, err
		}
		resp, err := c.Do(req)
		if err != nil {
			return nil, fmt.Errorf("failed to read the controller's %s: %w", path, err)
		}
		if resp.StatusCode != http.StatusOK {
			resp.Body.Close()
			return nil, fmt.Errorf("failed to read the controller's %s: HTTP %d", path, resp.StatusCode)
		}
		return resp, nil
	}
	resp, err := get("/debug/pprof/heap?gc=1")
	if err != nil {
		return nil, err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("failed to read the controller's heap profile: %w", err)
	}
	if err := os.WriteFile(profile, b, 0o644); err != nil {
		return nil, err
	}
	if resp, err = get("/metrics"); err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return gauges(resp.Body, heapInuse, heapAlloc, goroutines)
}

// gauges reads the unlabelled samples of names from a Prometheus text
// exposition; each must be there.
func gauges(r io.Reader, names ...string) (map[string]float64, error) {
	out := map[string]float64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 || !slices.Contains(names, f[0]) {
			continue
		}
		v, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			return nil, fmt.Errorf("failed to parse metric line %q: %w", sc.Text(), err)
		}
		out[f[0]] = v
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("failed to read the controller's metrics: %w", err)
	}
	for _, n := range names {
		if _, ok := out[n]; !ok {
			return nil, fmt.Errorf("failed to find %s in the controller's metrics", n)
		}
	}
	return out, nil
}

// flagValue returns the value of --name=value in a /proc cmdline (NUL
// separated arguments), or "".
func flagValue(cmdline []byte, name string) string {
	for _, arg := range strings.Split(string(cmdline), "\x00") {
		if v, ok := strings.CutPrefix(arg, name+"="); ok {
			return v
		}
	}
	return ""
}

// pingPath is what Flux's kubeconfig sanitizer (runtime/client.KubeConfig)
// asks of a cluster, once for each client it builds from a kubeconfig, to
// tell whether the server has flow control: the requests to it count the
// remote clients the controller built.
const pingPath = "/livez/ping"

// countRequests counts the completed requests of user to path in the audit
// log at auditPath.
func countRequests(auditPath, user, path string) (int, error) {
	f, err := os.Open(auditPath)
	if err != nil {
		return 0, fmt.Errorf("failed to open the audit log: %w", err)
	}
	defer f.Close()
	var n int
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for sc.Scan() {
		// Most lines are not the ones sought: skip them before parsing.
		if !bytes.Contains(sc.Bytes(), []byte(path)) {
			continue
		}
		var ev auditLine
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return 0, fmt.Errorf("failed to parse the audit log: %w", err)
		}
		if u, _, _ := strings.Cut(ev.RequestURI, "?"); ev.Stage == "ResponseComplete" && ev.User.Username == user && u == path {
			n++
		}
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("failed to read the audit log: %w", err)
	}
	return n, nil
}
