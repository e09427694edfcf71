package target

import (
	"context"
	"fmt"
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/meta"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// TestTargetCache: an entry goes when its last HelmRelease moves to another
// key or is forgotten, not while another still uses it; beyond the bound
// the least recently used goes; each eviction is reported once.
func TestTargetCache(t *testing.T) {
	hr := func(i int) types.NamespacedName { return types.NamespacedName{Namespace: "fleet", Name: fmt.Sprint(i)} }
	tests := []struct {
		name        string
		run         func(g Gomega, c *targetCache)
		wantKeys    []string
		wantEvicted int
	}{{
		name: "a rotated key replaces the old one",
		run: func(_ Gomega, c *targetCache) {
			for i := range 1000 {
				c.put(hr(1), &Target{Key: fmt.Sprintf("remote|rv%d", i)})
			}
		},
		wantKeys: []string{"remote|rv999"}, wantEvicted: 999,
	}, {
		name: "a shared key stays until its last user goes",
		run: func(g Gomega, c *targetCache) {
			c.put(hr(1), &Target{Key: "local"})
			_, ok := c.get(hr(2), "local")
			g.Expect(ok).To(BeTrue())
			c.forget(hr(1))
			c.forget(hr(3)) // never used anything
		},
		wantKeys: []string{"local"},
	}, {
		name: "the last user forgotten",
		run: func(_ Gomega, c *targetCache) {
			c.put(hr(1), &Target{Key: "local"})
			c.get(hr(2), "local")
			c.forget(hr(1))
			c.forget(hr(2))
		},
		wantKeys: []string{}, wantEvicted: 1,
	}, {
		name: "least recently used beyond the bound",
		run: func(g Gomega, c *targetCache) {
			for i := range 3 {
				c.put(hr(i), &Target{Key: fmt.Sprint("k", i)})
			}
			_, ok := c.get(hr(0), "k0") // k1 is now the least recently used
			g.Expect(ok).To(BeTrue())
			c.put(hr(3), &Target{Key: "k3"})
			_, ok = c.get(hr(1), "k1")
			g.Expect(ok).To(BeFalse())
		},
		wantKeys: []string{"k0", "k2", "k3"}, wantEvicted: 1,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			evicted := 0
			c := newTargetCache(3, func(string) { evicted++ })
			tt.run(g, c)
			keys := []string{}
			for k := range c.byKey {
				keys = append(keys, k)
			}
			g.Expect(keys).To(ConsistOf(tt.wantKeys))
			g.Expect(evicted).To(Equal(tt.wantEvicted))
			g.Expect(c.order.Len()).To(Equal(len(c.byKey)))
			g.Expect(c.entries).To(HaveLen(len(c.byKey)))
			for h, k := range c.byHR {
				g.Expect(c.byKey).To(HaveKey(k), "%s uses a cached key", h)
			}
		})
	}
}

// TestTargetsKubeConfigRotations: a tenant that rewrites its kubeconfig
// Secret 1,000 times holds one client (each rewrite is a new key, the old
// client goes, and what was memoized for it), and none once the Secret is
// gone or the HelmRelease is forgotten.
func TestTargetsKubeConfigRotations(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	secret, hr := tenantKubeConfig()
	c := fake.NewClientBuilder().WithObjects(secret).Build()
	evicted := 0
	targets := &Targets{Local: &rest.Config{Host: "https://127.0.0.1:1"}, Reader: c, Evicted: func(string) { evicted++ }}
	keys := map[string]bool{}
	for i := range 1000 {
		secret.Data["rotation"] = []byte(fmt.Sprint(i))
		g.Expect(c.Update(ctx, secret)).To(Succeed())
		tg, err := targets.For(ctx, hr)
		g.Expect(err).NotTo(HaveOccurred())
		keys[tg.Key] = true
		g.Expect(targets.Len()).To(Equal(1))
	}
	g.Expect(keys).To(HaveLen(1000), "each rewrite is a new client")
	g.Expect(evicted).To(Equal(999))

	other := hr.DeepCopy()
	other.Name = "other"
	other.Spec.KubeConfig = nil
	_, err := targets.For(ctx, other)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(targets.Len()).To(Equal(2))

	g.Expect(c.Delete(ctx, secret)).To(Succeed())
	_, err = targets.For(ctx, hr)
	g.Expect(err).To(HaveOccurred())
	g.Expect(targets.Len()).To(Equal(1), "the client of a Secret that is gone goes")
	targets.Forget(types.NamespacedName{Namespace: "tenant", Name: "other"})
	g.Expect(targets.Len()).To(BeZero(), "the client of a HelmRelease that is gone goes")
	g.Expect(evicted).To(Equal(1000), "the remote client of the Secret gone is reported; the local one is not: its releases stay valid")
}

// unreachableKubeConfig is a kubeconfig of a cluster on a closed loopback
// port: clients build from it, and any request fails at once.
const unreachableKubeConfig = `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`

// tenantKubeConfig returns a tenant's kubeconfig Secret and the HelmRelease
// whose spec.kubeConfig names it.
func tenantKubeConfig() (*corev1.Secret, *helmv2.HelmRelease) {
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant", Name: "kubeconfig"},
		Data: map[string][]byte{"value": []byte(unreachableKubeConfig)}}
	hr := &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant", Name: "cluster"},
		Spec: helmv2.HelmReleaseSpec{KubeConfig: &meta.KubeConfigReference{SecretRef: &meta.SecretKeyReference{Name: "kubeconfig"}}}}
	return secret, hr
}

// TestLocalTargetsShareTheMapper: every client of the local cluster uses
// the controller's REST mapper, whatever account it impersonates, so a
// tenant's first pass runs no discovery of its own; a remote cluster's
// client has its own.
func TestLocalTargetsShareTheMapper(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	secret, remote := tenantKubeConfig()
	c := fake.NewClientBuilder().WithObjects(secret).Build()
	mapper := apimeta.NewDefaultRESTMapper(nil)
	targets := &Targets{Local: &rest.Config{Host: "https://127.0.0.1:1"}, Reader: c, Mapper: mapper, DefaultServiceAccount: "tenant"}
	for _, sa := range []string{"", "deployer"} {
		hr := &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-" + sa, Name: "cluster"}, Spec: helmv2.HelmReleaseSpec{ServiceAccountName: sa}}
		tg, err := targets.For(ctx, hr)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(tg.Key).To(HavePrefix("local|system:serviceaccount:"))
		g.Expect(tg.Client.RESTMapper()).To(BeIdenticalTo(apimeta.RESTMapper(mapper)))
	}
	targets.DefaultServiceAccount = ""
	tg, err := targets.For(ctx, remote)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(tg.Remote).To(BeTrue())
	g.Expect(tg.Client.RESTMapper()).NotTo(BeIdenticalTo(apimeta.RESTMapper(mapper)))
}
