package apply

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	. "github.com/onsi/gomega"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	authorizationv1client "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"
	clienttesting "k8s.io/client-go/testing"
)

// TestAccessReviews: an allowed answer is kept for the TTL, a denial and a
// failed review for 30 s, each per namespace and resource, and every review
// asks to list that resource there.
func TestAccessReviews(t *testing.T) {
	m3mt := schema.GroupResource{Group: "infrastructure.cluster.x-k8s.io", Resource: "metal3machinetemplates"}
	md := schema.GroupResource{Group: "cluster.x-k8s.io", Resource: "machinedeployments"}
	type ask struct {
		after   time.Duration // since the start
		ns      string
		res     schema.GroupResource
		allowed bool // what MayList must answer
		asked   bool // whether it must ask the API server
	}
	tests := []struct {
		name string
		// answer is the API server's: allowed, or an error.
		answer func(*authorizationv1.ResourceAttributes) (bool, error)
		asks   []ask
	}{
		{
			name:   "allowed, kept for the TTL",
			answer: func(*authorizationv1.ResourceAttributes) (bool, error) { return true, nil },
			asks: []ask{
				{0, "a", m3mt, true, true},
				{time.Minute, "a", m3mt, true, false},
				{time.Minute, "b", m3mt, true, true},
				{time.Minute, "a", md, true, true},
				{5 * time.Minute, "a", m3mt, true, true},
			},
		},
		{
			name: "denied in another namespace, kept for 30 s",
			answer: func(a *authorizationv1.ResourceAttributes) (bool, error) {
				return a.Namespace == "own", nil
			},
			asks: []ask{
				{0, "other", m3mt, false, true},
				{20 * time.Second, "other", m3mt, false, false},
				{20 * time.Second, "own", m3mt, true, true},
				{31 * time.Second, "other", m3mt, false, true},
			},
		},
		{
			name: "a failed review is a denial",
			answer: func(*authorizationv1.ResourceAttributes) (bool, error) {
				return false, errors.New("the API server is away")
			},
			asks: []ask{
				{0, "a", m3mt, false, true},
				{10 * time.Second, "a", m3mt, false, false},
				{30 * time.Second, "a", m3mt, false, true},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			cs := fake.NewClientset()
			cs.PrependReactor("create", "selfsubjectaccessreviews", func(action clienttesting.Action) (bool, runtime.Object, error) {
				review := action.(clienttesting.CreateAction).GetObject().(*authorizationv1.SelfSubjectAccessReview)
				attrs := review.Spec.ResourceAttributes
				g.Expect(attrs.Verb).To(Equal("list"))
				allowed, err := tt.answer(attrs)
				review.Status.Allowed = allowed
				return true, review, err
			})
			start := time.Now()
			now := start
			a := NewAccessReviews(DefaultReviewTTL)
			a.now = func() time.Time { return now }
			asker := cs.AuthorizationV1().SelfSubjectAccessReviews()
			for i, q := range tt.asks {
				now = start.Add(q.after)
				before := a.Made()
				g.Expect(a.MayList(context.Background(), asker, "system:serviceaccount:a:tenant", q.ns, q.res)).To(Equal(q.allowed), "ask %d", i)
				g.Expect(a.Made() > before).To(Equal(q.asked), "ask %d asked the API server", i)
			}
		})
	}
}

// TestAccessReviewsBounded: past their bound, the answers are swept
// (the expired first), so a manifest naming many namespaces costs reviews,
// not memory.
func TestAccessReviewsBounded(t *testing.T) {
	g := NewWithT(t)
	a, asker := NewAccessReviews(DefaultReviewTTL), allowingAsker()
	res := schema.GroupResource{Group: "cluster.x-k8s.io", Resource: "machinedeployments"}
	for i := range 3 * maxReviewAnswers {
		a.MayList(context.Background(), asker, "system:serviceaccount:a:tenant", fmt.Sprintf("ns-%d", i), res)
	}
	g.Expect(len(a.answers)).To(BeNumerically("<=", maxReviewAnswers))
	g.Expect(a.Made()).To(BeEquivalentTo(3 * maxReviewAnswers))
}

// TestAccessReviewsByAccount: an answer is one account's: another account
// asks for itself.
func TestAccessReviewsByAccount(t *testing.T) {
	g := NewWithT(t)
	a, asker := NewAccessReviews(DefaultReviewTTL), allowingAsker()
	res := schema.GroupResource{Group: "cluster.x-k8s.io", Resource: "machinedeployments"}
	g.Expect(a.MayList(context.Background(), asker, "system:serviceaccount:a:tenant", "a", res)).To(BeTrue())
	g.Expect(a.MayList(context.Background(), asker, "system:serviceaccount:a:tenant", "a", res)).To(BeTrue())
	g.Expect(a.Made()).To(BeEquivalentTo(1))
	g.Expect(a.MayList(context.Background(), asker, "system:serviceaccount:a:other", "a", res)).To(BeTrue())
	g.Expect(a.Made()).To(BeEquivalentTo(2), "another account asks for itself")
}

// TestReviewsOutliveTargets: with more accounts than the clients Targets
// keeps, a client built again for an account finds its access reviews, and
// dropping a local client forgets none of its releases.
func TestReviewsOutliveTargets(t *testing.T) {
	g := NewWithT(t)
	var evicted []string
	targets := &Targets{Local: &rest.Config{Host: "https://127.0.0.1:1"}, MaxTargets: 1, ReviewTTL: DefaultReviewTTL,
		Cached: &CachedReader{}, Evicted: func(key string) { evicted = append(evicted, key) }}
	hr := func(ns string) *helmv2.HelmRelease {
		return &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Name: "cluster", Namespace: ns},
			Spec: helmv2.HelmReleaseSpec{ServiceAccountName: "tenant"}}
	}
	first, err := targets.For(context.Background(), hr("a"))
	g.Expect(err).NotTo(HaveOccurred())
	_, err = targets.For(context.Background(), hr("b"))
	g.Expect(err).NotTo(HaveOccurred())
	again, err := targets.For(context.Background(), hr("a"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(again).NotTo(BeIdenticalTo(first), "a new client: the bound dropped the first")
	g.Expect(again.Reader.(*ReviewedReader).Reviews).To(BeIdenticalTo(first.Reader.(*ReviewedReader).Reviews))
	g.Expect(again.Reader.(*ReviewedReader).User).To(Equal("system:serviceaccount:a:tenant"))
	g.Expect(evicted).To(BeEmpty())
}

// allowingAsker answers every access review: allowed.
func allowingAsker() authorizationv1client.SelfSubjectAccessReviewInterface {
	cs := fake.NewClientset()
	cs.PrependReactor("create", "selfsubjectaccessreviews", func(action clienttesting.Action) (bool, runtime.Object, error) {
		review := action.(clienttesting.CreateAction).GetObject().(*authorizationv1.SelfSubjectAccessReview)
		review.Status.Allowed = true
		return true, review, nil
	})
	return cs.AuthorizationV1().SelfSubjectAccessReviews()
}
