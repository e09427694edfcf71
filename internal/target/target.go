package target

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	runtimeclient "github.com/fluxcd/pkg/runtime/client"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/kubernetes"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/templatedrift/template-drift-controller/internal/plan"
)

// warnings logs each distinct API server warning once per process, as
// Flux's controllers do. Without it, a deprecation warning (for example for
// Metal3 v1beta1 kinds) is logged on every request.
var warnings = ctrllog.NewKubeAPIWarningLogger(ctrllog.KubeAPIWarningLoggerOptions{Deduplicate: true})

// LogWarningsOnce makes every client built from cfg log each distinct API
// server warning once. Target clients copy the setting from Targets.Local.
func LogWarningsOnce(cfg *rest.Config) *rest.Config {
	cfg.WarningHandler, cfg.WarningHandlerWithContext = nil, warnings
	return cfg
}

// Target is how the pipeline reaches the cluster a HelmRelease deploys to,
// as the identity helm-controller would use there.
type Target struct {
	// Client writes objects, and reads them when Reader is nil (uncached,
	// so such a pass sees the world as it is).
	Client client.Client
	// Reader, when set, serves the pass's reads from informers (a
	// *CachedReader, for the local cluster as the controller's own
	// identity; a *ReviewedReader, as an impersonated account, for what it
	// may list). Writes carry the resourceVersion they read, so a read
	// that lags is refused as a conflict and the pass runs again.
	Reader client.Reader
	// DryRuns, when set, answers the pass's dry-runs that confirm drift,
	// from a DryRunMemo where the same was asked before; Client when nil.
	DryRuns client.Client
	// Secrets feeds Helm's storage driver.
	Secrets corev1client.SecretsGetter
	// Key identifies cluster and identity, for memoization.
	Key string
	// Remote is true for spec.kubeConfig targets.
	Remote bool

	// notice, for the local cluster, is Targets.Notice.
	notice func(schema.GroupVersionKind)
	// closeIdle, for a remote cluster, closes the idle connections of the
	// target's HTTP client when the cache drops it (see resolve).
	closeIdle func()
}

// Targets builds Targets for HelmReleases and caches them by cluster and
// identity, because building a client runs API discovery.
type Targets struct {
	// Local is the controller's own rest.Config.
	Local *rest.Config
	// Reader reads kubeconfig Secrets in the HelmRelease namespace.
	Reader client.Reader
	// Scheme for the clients.
	Scheme *runtime.Scheme
	// Mapper, when set, is the REST mapper of every client of the local
	// cluster, whatever identity it impersonates: discovery answers the
	// same for every account, and a mapper of its own would cost each
	// tenant's client a discovery of every group and a copy of it. A
	// remote cluster's client discovers its own.
	Mapper apimeta.RESTMapper
	// DefaultServiceAccount is impersonated when a HelmRelease names none,
	// as helm-controller's --default-service-account.
	DefaultServiceAccount string
	// KubeConfigOpts tune remote clients, as helm-controller's flags do.
	KubeConfigOpts runtimeclient.KubeConfigOptions
	// Cached, when set, serves the reads of the local cluster as the
	// controller's own identity (no impersonation) from informers.
	Cached *CachedReader
	// ReviewTTL, when positive, serves the reads of an impersonated
	// account on the local cluster from Cached too, for the kinds and
	// namespaces the account may list, as reviews made as the account
	// answer (ReviewedReader, AccessReviews), kept this long where RBAC
	// changes are not watched. When 0, such reads are made live as the
	// account.
	ReviewTTL time.Duration
	// Reviews, when set, are every impersonated account's reviews (the
	// controller tells them of RBAC changes); NewAccessReviews(ReviewTTL)
	// when nil.
	Reviews *AccessReviews
	// Notice, when set, is told the kind and version of every object a
	// pass reads from the local cluster, whatever the identity: the
	// controller starts its watches from it.
	Notice func(schema.GroupVersionKind)
	// DryRunMemo, when set, remembers the server's answers to the pass's
	// dry-runs (Target.DryRuns) across passes.
	DryRunMemo *DryRunMemo
	// MaxTargets bounds the clients kept (DefaultMaxTargets when 0).
	MaxTargets int
	// Evicted, when set, is told the key of each remote client dropped, so
	// that what was kept for it can go too (release.Reader.Forget).
	Evicted func(key string)

	mu    sync.Mutex
	cache *targetCache
}

// For returns the Target of hr: the remote cluster of spec.kubeConfig, or
// the local one, impersonating spec.serviceAccountName (or the default) in
// the HelmRelease namespace, exactly as helm-controller does. Its errors
// wrap plan.ErrTargetUnavailable.
func (t *Targets) For(ctx context.Context, hr *helmv2.HelmRelease) (*Target, error) {
	tg, err := t.resolve(ctx, hr)
	if err != nil {
		// Its kubeconfig Secret may be gone: the client it had goes,
		// unless other HelmReleases use it.
		t.Forget(client.ObjectKeyFromObject(hr))
		return nil, fmt.Errorf("%w: %w", plan.ErrTargetUnavailable, err)
	}
	return tg, nil
}

// Forget drops the HelmRelease's use of its client, which goes if no other
// HelmRelease uses it: the HelmRelease is gone.
func (t *Targets) Forget(hr types.NamespacedName) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cache != nil {
		t.cache.forget(hr)
	}
}

// Len returns the number of clients kept.
func (t *Targets) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cache == nil {
		return 0
	}
	return t.cache.len()
}

func (t *Targets) resolve(ctx context.Context, hr *helmv2.HelmRelease) (*Target, error) {
	cfg, key, remote, err := t.restConfig(ctx, hr)
	if err != nil {
		return nil, err
	}
	id := client.ObjectKeyFromObject(hr)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cache == nil {
		t.cache = newTargetCache(t.MaxTargets, t.evicted)
	}
	if tg, ok := t.cache.get(id, key); ok {
		return tg, nil
	}
	// One HTTP client for the client and the clientset. A kubeconfig's own
	// credentials get a transport of their own from client-go, whose
	// connections would stay open for its 90 s idle timeout after the
	// cache dropped the target: a tenant rewriting its kubeconfig Secret
	// would hold one connection (about 85 KiB, a goroutine and a socket)
	// per rewrite of the last 90 s, whatever the cache's bound. The cache
	// closes them when it drops a remote target. Local targets share the
	// controller's transport (impersonation only wraps it), which must
	// stay warm.
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("failed to create HTTP client for target %s: %w", key, err)
	}
	opts := client.Options{Scheme: t.Scheme, HTTPClient: httpClient}
	if !remote {
		opts.Mapper = t.Mapper
	}
	if opts.Mapper == nil {
		// A cluster of its own (or a local one without a shared mapper):
		// nothing tells the controller of its CustomResourceDefinitions, so
		// a kind it does not serve is asked again only after an interval.
		if opts.Mapper, err = NewServedKinds(func() (apimeta.RESTMapper, error) {
			return apiutil.NewDynamicRESTMapper(cfg, httpClient)
		}, DefaultUnservedRecheck); err != nil {
			return nil, fmt.Errorf("failed to create REST mapper for target %s: %w", key, err)
		}
	}
	c, err := client.New(cfg, opts)
	if err != nil {
		return nil, fmt.Errorf("failed to create client for target %s: %w", key, err)
	}
	cs, err := kubernetes.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("failed to create clientset for target %s: %w", key, err)
	}
	tg := &Target{Client: t.DryRunMemo.Writes(c, key), DryRuns: t.DryRunMemo.DryRuns(c, key), Secrets: cs.CoreV1(), Key: key, Remote: remote}
	if remote {
		// http.Client's own CloseIdleConnections stops at client-go's
		// wrapping round trippers; this unwraps them.
		tg.closeIdle = func() { utilnet.CloseIdleConnectionsFor(httpClient.Transport) }
	}
	if !remote {
		tg.notice = t.Notice
	}
	switch {
	case remote || t.Cached == nil:
	case key == LocalKey:
		tg.Reader = t.Cached
	case t.ReviewTTL > 0:
		// An impersonated account: what it may list comes from the
		// informers, everything else live as the account.
		if t.Reviews == nil {
			t.Reviews = NewAccessReviews(t.ReviewTTL)
		}
		tg.Reader = &ReviewedReader{Cached: t.Cached, Live: retryingReader{c}, Mapper: opts.Mapper,
			Reviews: t.Reviews, Asker: cs.AuthorizationV1(), User: cfg.Impersonate.UserName}
	}
	t.cache.put(id, tg)
	return tg, nil
}

// evicted tells Evicted of a remote target dropped. A local target's
// releases are read again, under the same key, by the client built for it
// next: what was kept for it stays valid (the memo checks every entry
// against its Secret's UID and resourceVersion), and a fleet of more
// tenants than the bound would otherwise decode every release on every
// pass.
func (t *Targets) evicted(key string) {
	if !strings.HasPrefix(key, remoteKeyPrefix) {
		return
	}
	t.DryRunMemo.ForgetTarget(key)
	if t.Evicted != nil {
		t.Evicted(key)
	}
}

// LocalKey names the local cluster read as the controller itself: the key
// of its target, and of the releases memoized through it.
const LocalKey = "local"

// remoteKeyPrefix starts the key of every spec.kubeConfig target.
const remoteKeyPrefix = "remote:"

// restConfig returns the config of hr's target, the key that names cluster
// and identity, and whether the cluster is remote: the local config or
// spec.kubeConfig's, impersonating the service account, logging each API
// server warning once.
func (t *Targets) restConfig(ctx context.Context, hr *helmv2.HelmRelease) (cfg *rest.Config, key string, remote bool, err error) {
	cfg, key = rest.CopyConfig(t.Local), LocalKey
	if ref := hr.Spec.KubeConfig; ref != nil && ref.SecretRef == nil {
		// A kubeConfig without a secretRef (a configMapRef, for a cloud
		// provider's workload identity) names a remote cluster this add-on
		// cannot reach: never mistake it for the local one.
		return nil, "", false, fmt.Errorf("%w: spec.kubeConfig has no secretRef; a configMapRef (workload identity) is not supported, only spec.kubeConfig.secretRef",
			plan.ErrInvalidConfiguration)
	}
	if ref := hr.Spec.KubeConfig; ref != nil && ref.SecretRef != nil {
		rc, secretKey, err := t.remoteConfig(ctx, hr)
		if err != nil {
			return nil, "", false, err
		}
		cfg, key, remote = runtimeclient.KubeConfig(ctx, rc, t.KubeConfigOpts), secretKey, true
	}
	if sa := t.ServiceAccount(hr); sa != "" {
		cfg.Impersonate = rest.ImpersonationConfig{
			UserName: fmt.Sprintf("system:serviceaccount:%s:%s", hr.Namespace, sa),
		}
		key += "|" + cfg.Impersonate.UserName
	}
	return LogWarningsOnce(cfg), key, remote, nil
}

// kubeConfigSecret reads the kubeconfig Secret as the controller, as
// helm-controller does, or, with the multi-tenancy lockdown
// (DefaultServiceAccount set), as the account the HelmRelease impersonates,
// so that the controller's own role needs no Secret access and a tenant
// reads only the Secrets its account may read.
func (t *Targets) kubeConfigSecret(ctx context.Context, hr *helmv2.HelmRelease, name string) (*corev1.Secret, error) {
	if t.DefaultServiceAccount == "" {
		var secret corev1.Secret
		if err := t.Reader.Get(ctx, client.ObjectKey{Namespace: hr.Namespace, Name: name}, &secret); err != nil {
			return nil, err
		}
		return &secret, nil
	}
	cfg := rest.CopyConfig(t.Local)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: fmt.Sprintf("system:serviceaccount:%s:%s", hr.Namespace, t.ServiceAccount(hr))}
	cs, err := kubernetes.NewForConfig(LogWarningsOnce(cfg))
	if err != nil {
		return nil, err
	}
	secret, err := cs.CoreV1().Secrets(hr.Namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("as %s: %w", cfg.Impersonate.UserName, err)
	}
	return secret, nil
}

// ServiceAccount returns the account hr's passes impersonate, or "" when
// they act as the controller itself.
func (t *Targets) ServiceAccount(hr *helmv2.HelmRelease) string {
	if hr.Spec.ServiceAccountName != "" {
		return hr.Spec.ServiceAccountName
	}
	return t.DefaultServiceAccount
}

// remoteConfig reads the kubeconfig Secret; the cache key includes its
// resourceVersion so a rotated kubeconfig gets a new client.
func (t *Targets) remoteConfig(ctx context.Context, hr *helmv2.HelmRelease) (*rest.Config, string, error) {
	ref := hr.Spec.KubeConfig.SecretRef
	secret, err := t.kubeConfigSecret(ctx, hr, ref.Name)
	if err != nil {
		return nil, "", fmt.Errorf("failed to read kubeconfig Secret %s/%s: %w", hr.Namespace, ref.Name, err)
	}
	var data []byte
	switch {
	case ref.Key != "":
		data = secret.Data[ref.Key]
	case secret.Data["value"] != nil:
		data = secret.Data["value"]
	default:
		data = secret.Data["value.yaml"]
	}
	if len(data) == 0 {
		return nil, "", fmt.Errorf("failed to read kubeconfig Secret %s/%s: no kubeconfig under key %q (or value, value.yaml)",
			hr.Namespace, ref.Name, ref.Key)
	}
	cfg, err := runtimeclient.KubeConfigFromBytes(data)
	if err != nil {
		return nil, "", fmt.Errorf("failed to parse kubeconfig Secret %s/%s: %w", hr.Namespace, ref.Name, err)
	}
	return cfg, fmt.Sprintf("%s%s/%s@%s", remoteKeyPrefix, hr.Namespace, ref.Name, secret.ResourceVersion), nil
}
