package target

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	authorizationv1client "k8s.io/client-go/kubernetes/typed/authorization/v1"
	clienttesting "k8s.io/client-go/testing"
)

var (
	m3mtResource = schema.GroupResource{Group: "infrastructure.cluster.x-k8s.io", Resource: "metal3machinetemplates"}
	mdResource   = schema.GroupResource{Group: "cluster.x-k8s.io", Resource: "machinedeployments"}
)

// authorizer is what a fake API server answers to reviews.
type authorizer struct {
	// rules answers a rules review in a namespace.
	rules func(ns string) ([]authorizationv1.ResourceRule, bool, error)
	// access answers an access review.
	access func(*authorizationv1.ResourceAttributes) (bool, error)
}

// listRules grants list on resources in namespace own, in full.
func listRules(own string, resources ...schema.GroupResource) func(string) ([]authorizationv1.ResourceRule, bool, error) {
	return func(ns string) ([]authorizationv1.ResourceRule, bool, error) {
		if ns != own {
			return nil, false, nil
		}
		var out []authorizationv1.ResourceRule
		for _, r := range resources {
			out = append(out, authorizationv1.ResourceRule{Verbs: []string{"get", "list", "watch"}, APIGroups: []string{r.Group}, Resources: []string{r.Resource}})
		}
		return out, false, nil
	}
}

// asker returns a client whose reviews z answers; every access review
// must ask to list.
func (z authorizer) asker(g Gomega) authorizationv1client.AuthorizationV1Interface {
	cs := fake.NewClientset()
	cs.PrependReactor("create", "selfsubjectrulesreviews", func(action clienttesting.Action) (bool, runtime.Object, error) {
		review := action.(clienttesting.CreateAction).GetObject().(*authorizationv1.SelfSubjectRulesReview)
		rules, incomplete, err := z.rules(review.Spec.Namespace)
		review.Status.ResourceRules, review.Status.Incomplete = rules, incomplete
		return true, review, err
	})
	cs.PrependReactor("create", "selfsubjectaccessreviews", func(action clienttesting.Action) (bool, runtime.Object, error) {
		review := action.(clienttesting.CreateAction).GetObject().(*authorizationv1.SelfSubjectAccessReview)
		attrs := review.Spec.ResourceAttributes
		g.Expect(attrs.Verb).To(Equal("list"))
		allowed, err := z.access(attrs)
		review.Status.Allowed = allowed
		return true, review, err
	})
	return cs.AuthorizationV1()
}

// TestAccessReviews: in a namespace, one rules review answers every kind,
// kept for the TTL, or until an RBAC object changes when they are watched;
// where the rules are incomplete, could not be asked, or the question is
// cluster-wide, an access review a kind answers, allowed kept for the TTL
// and a denial or a failure for 30 s. An answer asked within rbacSettle of
// an RBAC change is asked again when it has settled.
func TestAccessReviews(t *testing.T) {
	never := func(*authorizationv1.ResourceAttributes) (bool, error) {
		panic("an access review where the rules answer")
	}
	type ask struct {
		after       time.Duration // since the start
		rbacChanged bool          // an RBAC object changed just before
		ns          string
		res         schema.GroupResource
		allowed     bool  // what MayList must answer
		asked       int64 // the reviews it must ask
	}
	tests := []struct {
		name    string
		z       authorizer
		watched bool
		asks    []ask
	}{
		{
			name: "complete rules answer every kind, for the TTL",
			z:    authorizer{rules: listRules("a", m3mtResource), access: never},
			asks: []ask{
				{0, false, "a", m3mtResource, true, 1},
				{time.Minute, false, "a", m3mtResource, true, 0},
				{time.Minute, false, "a", mdResource, false, 0},
				{time.Minute, false, "b", m3mtResource, false, 1},
				{5 * time.Minute, false, "a", m3mtResource, true, 1},
			},
		},
		{
			name:    "watched: kept until an RBAC object changes",
			z:       authorizer{rules: listRules("a", m3mtResource), access: never},
			watched: true,
			asks: []ask{
				{0, false, "a", m3mtResource, true, 1},
				{time.Hour, false, "a", m3mtResource, true, 0},
				{time.Hour, false, "a", mdResource, false, 0},
				{time.Hour, true, "a", mdResource, false, 1},
				{time.Hour, false, "a", m3mtResource, true, 0},
				{time.Hour + rulesMaxAge, false, "a", m3mtResource, true, 1},
				// Asked within the settle of a change, an answer is asked
				// again once it has settled, then kept.
				{2*time.Hour + rulesMaxAge, true, "a", m3mtResource, true, 1},
				{2*time.Hour + rulesMaxAge + rbacSettle - time.Second, false, "a", m3mtResource, true, 0},
				{2*time.Hour + rulesMaxAge + rbacSettle, false, "a", m3mtResource, true, 1},
				{3*time.Hour + rulesMaxAge + rbacSettle, false, "a", m3mtResource, true, 0},
			},
		},
		{
			name: "incomplete rules: access reviews, allowed kept for the TTL, denied for 30 s",
			z: authorizer{
				rules: func(string) ([]authorizationv1.ResourceRule, bool, error) { return nil, true, nil },
				access: func(a *authorizationv1.ResourceAttributes) (bool, error) {
					return a.Namespace == "own", nil
				}},
			watched: true,
			asks: []ask{
				{0, false, "own", m3mtResource, true, 2},
				{time.Minute, false, "own", m3mtResource, true, 0},
				{time.Minute, false, "own", mdResource, true, 1},
				{time.Minute, false, "other", m3mtResource, false, 2},
				{time.Minute + 20*time.Second, false, "other", m3mtResource, false, 0},
				{time.Minute + 31*time.Second, false, "other", m3mtResource, false, 1},
				{5 * time.Minute, false, "own", m3mtResource, true, 2},
				{5 * time.Minute, true, "own", m3mtResource, true, 2},
				{5*time.Minute + rbacSettle - time.Second, false, "own", m3mtResource, true, 0},
				{5*time.Minute + rbacSettle, false, "own", m3mtResource, true, 2},
				{6 * time.Minute, false, "own", m3mtResource, true, 0},
			},
		},
		{
			name: "a failed rules review: access reviews; a failed one is a denial",
			z: authorizer{
				rules: func(string) ([]authorizationv1.ResourceRule, bool, error) {
					return nil, false, errors.New("the API server is away")
				},
				access: func(*authorizationv1.ResourceAttributes) (bool, error) {
					return false, errors.New("the API server is away")
				}},
			asks: []ask{
				{0, false, "a", m3mtResource, false, 2},
				{10 * time.Second, false, "a", m3mtResource, false, 1},
				{30 * time.Second, false, "a", m3mtResource, false, 2},
			},
		},
		{
			name: "cluster-wide: an access review",
			z: authorizer{rules: listRules("a", m3mtResource),
				access: func(a *authorizationv1.ResourceAttributes) (bool, error) { return a.Namespace == "", nil }},
			asks: []ask{
				{0, false, "", m3mtResource, true, 1},
				{time.Minute, false, "", m3mtResource, true, 0},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			start := time.Now()
			now := start
			a := NewAccessReviews(DefaultReviewTTL)
			a.now = func() time.Time { return now }
			if tt.watched {
				a.WatchRBAC(func() bool { return true })
			}
			asker := tt.z.asker(g)
			for i, q := range tt.asks {
				now = start.Add(q.after)
				if q.rbacChanged {
					a.RBACChanged()
				}
				before := a.Made()
				g.Expect(a.MayList(context.Background(), asker, "system:serviceaccount:a:tenant", q.ns, q.res)).To(Equal(q.allowed), "ask %d", i)
				g.Expect(a.Made()-before).To(Equal(q.asked), "ask %d: reviews asked", i)
			}
		})
	}
}

// TestRulesAcrossAChange: a rules review asked while an RBAC object
// changes answers the pass that asked, and is not kept.
func TestRulesAcrossAChange(t *testing.T) {
	g := NewWithT(t)
	a := NewAccessReviews(DefaultReviewTTL)
	a.WatchRBAC(func() bool { return true })
	z := authorizer{rules: func(ns string) ([]authorizationv1.ResourceRule, bool, error) {
		a.RBACChanged() // while the review is under way
		return listRules("a", m3mtResource)(ns)
	}}
	asker := z.asker(g)
	g.Expect(a.MayList(context.Background(), asker, "system:serviceaccount:a:tenant", "a", m3mtResource)).To(BeTrue())
	g.Expect(a.MayList(context.Background(), asker, "system:serviceaccount:a:tenant", "a", m3mtResource)).To(BeTrue())
	g.Expect(a.Made()).To(BeEquivalentTo(2), "the first answer was not kept")
}

// TestRulesUntilSynced: before the RBAC watch has synced, a complete rules
// review is kept for the TTL only.
func TestRulesUntilSynced(t *testing.T) {
	g := NewWithT(t)
	start := time.Now()
	now := start
	a := NewAccessReviews(DefaultReviewTTL)
	a.now = func() time.Time { return now }
	a.WatchRBAC(func() bool { return false })
	asker := authorizer{rules: listRules("a", m3mtResource)}.asker(g)
	g.Expect(a.MayList(context.Background(), asker, "system:serviceaccount:a:tenant", "a", m3mtResource)).To(BeTrue())
	now = start.Add(DefaultReviewTTL)
	g.Expect(a.MayList(context.Background(), asker, "system:serviceaccount:a:tenant", "a", m3mtResource)).To(BeTrue())
	g.Expect(a.Made()).To(BeEquivalentTo(2))
}

// TestAccessReviewsBounded: past their bound, the answers are swept
// (the expired first), so a manifest naming many namespaces costs reviews,
// not memory.
func TestAccessReviewsBounded(t *testing.T) {
	g := NewWithT(t)
	a, asker := NewAccessReviews(DefaultReviewTTL), allowingAsker()
	for i := range 3 * maxReviewAnswers {
		a.MayList(context.Background(), asker, "system:serviceaccount:a:tenant", fmt.Sprintf("ns-%d", i), mdResource)
	}
	g.Expect(len(a.rules)).To(BeNumerically("<=", maxReviewAnswers))
	g.Expect(len(a.answers)).To(BeNumerically("<=", maxReviewAnswers))
	g.Expect(a.Made()).To(BeEquivalentTo(3 * maxReviewAnswers))
}

// TestAccessReviewsByAccount: an answer is one account's: another account
// asks for itself.
func TestAccessReviewsByAccount(t *testing.T) {
	g := NewWithT(t)
	a, asker := NewAccessReviews(DefaultReviewTTL), allowingAsker()
	g.Expect(a.MayList(context.Background(), asker, "system:serviceaccount:a:tenant", "a", mdResource)).To(BeTrue())
	g.Expect(a.MayList(context.Background(), asker, "system:serviceaccount:a:tenant", "a", mdResource)).To(BeTrue())
	g.Expect(a.Made()).To(BeEquivalentTo(1))
	g.Expect(a.MayList(context.Background(), asker, "system:serviceaccount:a:other", "a", mdResource)).To(BeTrue())
	g.Expect(a.Made()).To(BeEquivalentTo(2), "another account asks for itself")
}

// allowingAsker answers every rules review: everything, in full.
func allowingAsker() authorizationv1client.AuthorizationV1Interface {
	return authorizer{rules: func(string) ([]authorizationv1.ResourceRule, bool, error) {
		return []authorizationv1.ResourceRule{{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}}}, false, nil
	}}.asker(NewGomega(func(string, ...int) {}))
}
