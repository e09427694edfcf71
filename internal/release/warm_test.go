package release_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	. "github.com/onsi/gomega"
	"helm.sh/helm/v4/pkg/release/common"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/templatedrift/template-drift-controller/internal/release"
)

// countingSecrets counts the Secret reads made through it.
type countingSecrets struct {
	corev1client.SecretsGetter
	gets, lists atomic.Int64
}

func (c *countingSecrets) Secrets(ns string) corev1client.SecretInterface {
	return countingSecret{SecretInterface: c.SecretsGetter.Secrets(ns), c: c}
}

type countingSecret struct {
	corev1client.SecretInterface
	c *countingSecrets
}

func (s countingSecret) Get(ctx context.Context, name string, opts metav1.GetOptions) (*corev1.Secret, error) {
	s.c.gets.Add(1)
	return s.SecretInterface.Get(ctx, name, opts)
}

func (s countingSecret) List(ctx context.Context, opts metav1.ListOptions) (*corev1.SecretList, error) {
	s.c.lists.Add(1)
	return s.SecretInterface.List(ctx, opts)
}

// TestWarm: a warm-up decodes the wanted, current releases of every
// namespace from paged lists, and the passes then read them with no Secret
// request; what it was not asked for, or did not select (superseded
// versions), is read as before; a corrupt Secret is memoized as the error
// a pass would get; a second warm-up decodes nothing again; entries are
// only for the key that listed; a full memo stops it.
func TestWarm(t *testing.T) {
	g := NewWithT(t)
	env, cs := clusterEnv(t)
	ns1, ns2 := newNamespace(t, cs), newNamespace(t, cs)
	st1, st2 := helmStorage(cs, ns1), helmStorage(cs, ns2)
	g.Expect(st1.Create(helmRelease("a", 1, common.StatusSuperseded, "ssa"))).To(Succeed())
	g.Expect(st1.Create(helmRelease("a", 2, common.StatusDeployed, "ssa"))).To(Succeed())
	g.Expect(st1.Create(helmRelease("b", 1, common.StatusDeployed, "ssa"))).To(Succeed())
	g.Expect(st2.Create(helmRelease("c", 1, common.StatusFailed, "ssa"))).To(Succeed())
	writeReleaseSecret(t, cs, ns2, "d", 1, []byte("not base64!"))
	// Helm's labels on a Secret of another name: not a record Helm's
	// driver wrote for release "e".
	_, err := cs.CoreV1().Secrets(ns2).Create(t.Context(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "imposter", Labels: map[string]string{
			"owner": "helm", "name": "e", "status": "deployed", "version": "1"}},
	}, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())

	wanted := map[string]bool{ns1 + "/a": true, ns2 + "/c": true, ns2 + "/d": true, ns2 + "/e": true}
	want := func(ns, name string) bool { return wanted[ns+"/"+name] }
	counter := &countingSecrets{SecretsGetter: cs.CoreV1()}
	src := release.Source{Secrets: counter, Meta: env.Client, Key: "local"}
	r := release.NewReader(1 << 20)

	res, err := r.Warm(t.Context(), src, want, 2)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Decoded).To(Equal(3), "a.v2, c.v1 and the corrupt d.v1")
	g.Expect(res.Listed).To(BeNumerically(">=", 5), "every Secret of the selector, in every namespace")
	g.Expect(res.Pages).To(BeNumerically(">=", 3), "pages of two")
	g.Expect(res.Full).To(BeFalse())
	g.Expect(counter.gets.Load()).To(BeZero(), "a warm-up lists, it reads no Secret one by one")
	g.Expect(counter.lists.Load()).To(BeEquivalentTo(res.Pages), "one list request a page")
	g.Expect(release.DecodeCount(r)).To(BeEquivalentTo(3))

	a, err := r.Get(t.Context(), src, ns1, "a", 2)
	g.Expect(err).NotTo(HaveOccurred())
	expectTestManifest(g, a)
	g.Expect(a.Status).To(Equal("deployed"))
	c, err := r.Get(t.Context(), src, ns2, "c", 1)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(c.Status).To(Equal("failed"))
	_, err = r.Get(t.Context(), src, ns2, "d", 1)
	g.Expect(err).To(MatchError(release.ErrReleaseCorrupt))
	g.Expect(counter.gets.Load()).To(BeZero(), "warmed releases are read from the memo")
	g.Expect(release.DecodeCount(r)).To(BeEquivalentTo(3))

	_, err = r.Get(t.Context(), src, ns1, "b", 1)
	g.Expect(err).NotTo(HaveOccurred())
	_, err = r.Get(t.Context(), src, ns1, "a", 1)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(counter.gets.Load()).To(BeEquivalentTo(2), "an unwanted release and a superseded version are read one by one")

	res, err = r.Warm(t.Context(), src, want, 2)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Decoded).To(BeZero(), "what is memoized at the same resourceVersion is not decoded again")

	counter.gets.Store(0)
	other := release.Source{Secrets: counter, Meta: env.Client, Key: "local|system:serviceaccount:" + ns1 + ":tenant"}
	_, err = r.Get(t.Context(), other, ns1, "a", 2)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(counter.gets.Load()).To(BeEquivalentTo(1), "another identity's reads do not find what the warm-up's identity read")

	// Room for one entry (about 1 KiB with its strings) and no more.
	small := release.NewReaderWithMemo(1<<20, 1400)
	res, err = small.Warm(t.Context(), src, want, 2)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Full).To(BeTrue())
	g.Expect(res.Decoded).To(Equal(1), "a full memo stops the warm-up")
	none := release.NewReaderWithMemo(1<<20, 0)
	res, err = none.Warm(t.Context(), src, want, 2)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res).To(Equal(release.WarmResult{Full: true}), "no memo, no list")
}

// refusingSecrets refuses every list, as the API server does an identity
// without the list verb on Secrets.
type refusingSecrets struct{ corev1client.SecretInterface }

func (r refusingSecrets) Secrets(string) corev1client.SecretInterface { return r }

func (refusingSecrets) List(context.Context, metav1.ListOptions) (*corev1.SecretList, error) {
	return nil, apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "", errors.New("no list"))
}

// TestWarmRefused: a warm-up whose identity may not list Secrets fails
// with the API's error, wrapped, and memoizes nothing; one without a
// Secrets client says so.
func TestWarmRefused(t *testing.T) {
	g := NewWithT(t)
	r := release.NewReader(1 << 20)
	all := func(string, string) bool { return true }
	res, err := r.Warm(t.Context(), release.Source{Secrets: refusingSecrets{}, Key: "local"}, all, 0)
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%v", err)
	g.Expect(err).To(MatchError(ContainSubstring("to warm the release memo")))
	g.Expect(res).To(Equal(release.WarmResult{}))
	g.Expect(release.MemoLen(r)).To(BeZero())
	_, err = r.Warm(t.Context(), release.Source{Key: "local"}, all, 0)
	g.Expect(err).To(MatchError(ContainSubstring("has no Secrets client")))
}
