package chaos

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/meta"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/test/scale"
)

// InvBoundedMemory is the memory scenario's own invariant: the
// controller's peak RSS (VmHWM) stays under half the chart's default memory
// limit, so that the chart's default leaves room to spare.
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

// createFleet adds the memory scenario's releases to the fleet: the
// rewriters, whose HelmReleases reach the same API server through a
// kubeconfig Secret of their namespace (spec.kubeConfig.secretRef), and the
// large releases, whose stored revision 2 carries values and a hook of
// several hundred KiB. Both are ordinary drifted releases of the fleet's
// cases, which must converge; the run's N counts them too.
func (m *memoryRun) createFleet(ctx context.Context) error {
	w := m.w
	base, err := os.ReadFile(w.kubeconfig)
	if err != nil {
		return fmt.Errorf("failed to read the controller's kubeconfig: %w", err)
	}
	cs, err := kubernetes.NewForConfig(w.env.Config)
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
		w.fleet.Cases[ns] = c
		w.fleet.Objects = append(w.fleet.Objects, objs...)
		g.Go(func() error {
			if err := scale.CreateRelease(gctx, w.env, ns, live, desired, method, resync); err != nil {
				return err
			}
			return then(gctx, ns, desired, method)
		})
		return nil
	}
	for i := range rewriters {
		kc, err := renameKubeconfig(base, rewriterNamespace(i)+"-0")
		if err != nil {
			return err
		}
		if err := add(rewriterNamespace(i), CaseOf(i), func(ctx context.Context, ns, _, _ string) error {
			return deployThroughKubeconfig(ctx, w, ns, kc)
		}); err != nil {
			return err
		}
	}
	for i := range m.fig.Large {
		if err := add(largeNamespace(i), CaseOf(i), func(ctx context.Context, ns, desired, method string) error {
			n, err := upgradeLarge(ctx, w.env.Client, cs.CoreV1().Secrets(ns), ns, desired, method, 2, uint64(m.in.Seed)+uint64(i))
			mu.Lock()
			sizes = append(sizes, n)
			mu.Unlock()
			return err
		}); err != nil {
			return err
		}
	}
	err = g.Wait()
	w.added = rewriters + m.fig.Large
	for _, n := range sizes {
		m.fig.LargeStoredBytes = max(m.fig.LargeStoredBytes, n)
	}
	return err
}

// deployThroughKubeconfig stores kc in the kubeconfig Secret of ns and
// points the HelmRelease of ns at it. The controller is not running yet, so
// its first pass already goes through the Secret.
func deployThroughKubeconfig(ctx context.Context, w *world, ns string, kc []byte) error {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: kubeConfigName}, Data: map[string][]byte{kubeConfigKey: kc}}
	if err := w.env.Client.Create(ctx, s); err != nil {
		return fmt.Errorf("failed to create the kubeconfig Secret of %s: %w", ns, err)
	}
	hr := &helmv2.HelmRelease{}
	if err := w.env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cluster"}, hr); err != nil {
		return fmt.Errorf("failed to read HelmRelease %s/cluster: %w", ns, err)
	}
	base := hr.DeepCopy()
	hr.Spec.KubeConfig = &meta.KubeConfigReference{SecretRef: &meta.SecretKeyReference{Name: kubeConfigName, Key: kubeConfigKey}}
	if err := w.env.Client.Patch(ctx, hr, client.MergeFrom(base)); err != nil {
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
