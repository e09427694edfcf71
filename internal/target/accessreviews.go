package target

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	authorizationv1client "k8s.io/client-go/kubernetes/typed/authorization/v1"
	rbacvalidation "k8s.io/component-helpers/auth/rbac/validation"
)

// The lifetimes of an account's answers.
//
// A rules review (one SelfSubjectRulesReview an account and namespace)
// that lists every rule that applies is kept until an RBAC object changes
// (AccessReviews.RBACChanged), up to rulesMaxAge: every authorizer that
// lists its rules in full takes them from RBAC objects or from the API
// server's own configuration, and rulesMaxAge bounds how long a change of
// that configuration takes to be seen. Without a watch of RBAC objects, it
// is kept for the TTL.
//
// An access review (a SelfSubjectAccessReview a kind) is what is asked
// where rules cannot answer: an authorizer, such as a webhook, does not
// list its rules, or the question is cluster-wide. An allowed answer is
// kept as long as the API server's own webhook authorizer keeps one by
// default (--authorization-webhook-cache-authorized-ttl), a denied one or
// a failed review as long as it keeps a denial (…-unauthorized-ttl): a
// right granted is used within 30 s, and one revoked stops serving cached
// reads within the TTL (writes are always made, and authorized, as the
// account).
const (
	DefaultReviewTTL = 5 * time.Minute
	deniedReviewTTL  = 30 * time.Second
	rulesMaxAge      = 6 * time.Hour
	// rbacSettle bounds how long an answer asked soon after an RBAC change
	// is kept. The controller's watch and the API server's authorizer each
	// learn of the change from the API server's watch cache, in no set
	// order: a review asked just after the controller saw a binding deleted
	// may be answered by an authorizer that has not seen it yet, and kept
	// until the next change that answer would let a revoked account read
	// from the informers for hours (or a granted one read live). Asked
	// again once the change has settled, the answer is the authorizer's.
	rbacSettle = 10 * time.Second
	// maxReviewAnswers bounds the answers kept of each sort, every
	// account's: past it, the expired go first, then all (a manifest
	// naming thousands of namespaces costs reviews, not memory). A fleet of
	// 5,000 tenants keeps 5,000 rules answers, and 35,000 access reviews
	// where rules cannot answer.
	maxReviewAnswers = 1 << 16
)

// AccessReviews asks the API server, as an account, whether it may list a
// resource in a namespace, and keeps the answers by account. In a
// namespace it asks once for all the account's rules there (a
// SelfSubjectRulesReview) and answers every kind from them, locally, with
// the rule matching of Kubernetes' RBAC; where the rules review says its
// list is incomplete, or cluster-wide, it asks about the kind (a
// SelfSubjectAccessReview). A Targets has one for every account, so the
// answers outlive the clients it drops beyond its bound.
//
// Rules lists only what is allowed, so a kind the rules do not cover is
// read live, as the account, and the API server decides: an answer that
// lags a grant costs requests, and one that lags a revocation is what
// RBACChanged prevents.
type AccessReviews struct {
	ttl time.Duration
	now func() time.Time

	mu      sync.Mutex
	answers map[reviewKey]reviewAnswer
	rules   map[rulesKey]rulesAnswer
	// epoch counts the RBAC changes seen: an answer asked before the last
	// one is not kept.
	epoch uint64
	// changedAt is when the last RBAC change was seen (rbacSettle).
	changedAt time.Time
	// watched, when set, reports whether RBAC changes are seen
	// (RBACChanged is called for every one).
	watched func() bool
	// made counts the reviews asked, of both sorts, for tests.
	made atomic.Int64
}

type reviewKey struct {
	user, namespace string
	resource        schema.GroupResource
}

type reviewAnswer struct {
	allowed bool
	expires time.Time
}

type rulesKey struct{ user, namespace string }

// rulesAnswer is an account's rules in a namespace; an incomplete one sends
// the questions of its account and namespace to access reviews until it
// expires.
type rulesAnswer struct {
	rules    []rbacv1.PolicyRule
	complete bool
	expires  time.Time
}

// NewAccessReviews returns AccessReviews that keep an allowed access
// review's answer for ttl, and a complete rules review's for ttl until
// WatchRBAC.
func NewAccessReviews(ttl time.Duration) *AccessReviews {
	return &AccessReviews{ttl: ttl, now: time.Now, answers: map[reviewKey]reviewAnswer{}, rules: map[rulesKey]rulesAnswer{}}
}

// WatchRBAC tells AccessReviews that RBACChanged is called for every
// change of a Role, ClusterRole, RoleBinding or ClusterRoleBinding once
// synced reports true: complete rules are then kept until one changes (up
// to rulesMaxAge).
func (a *AccessReviews) WatchRBAC(synced func() bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.watched = synced
}

// RBACChanged drops every answer: an RBAC object changed, so any account's
// rights may have.
func (a *AccessReviews) RBACChanged() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.epoch++
	a.changedAt = a.now()
	clear(a.answers)
	clear(a.rules)
}

// MayList reports whether user may list resource in namespace ("" for
// every namespace), asking through asker (a client impersonating user)
// when no answer is kept. A review that fails counts as a denial (the read
// then goes live, and the API server decides), kept for 30 s.
func (a *AccessReviews) MayList(ctx context.Context, asker authorizationv1client.AuthorizationV1Interface, user, namespace string,
	resource schema.GroupResource) bool {
	if namespace != "" {
		if rules, ok := a.rulesOf(ctx, asker, user, namespace); ok {
			covered, _ := rbacvalidation.Covers(rules, []rbacv1.PolicyRule{{Verbs: []string{"list"},
				APIGroups: []string{resource.Group}, Resources: []string{resource.Resource}}})
			return covered
		}
	}
	key := reviewKey{user: user, namespace: namespace, resource: resource}
	now := a.now()
	a.mu.Lock()
	ans, ok := a.answers[key]
	epoch := a.epoch
	a.mu.Unlock()
	if ok && now.Before(ans.expires) {
		return ans.allowed
	}
	allowed := a.ask(ctx, asker, key) == nil
	ttl := deniedReviewTTL
	if allowed {
		ttl = a.ttl
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.epoch != epoch {
		return allowed // asked across an RBAC change: used once, not kept
	}
	if len(a.answers) >= maxReviewAnswers {
		sweep(a.answers, now, func(v reviewAnswer) time.Time { return v.expires })
	}
	a.answers[key] = reviewAnswer{allowed: allowed, expires: a.expiry(now, ttl)}
	return allowed
}

// expiry is when an answer asked at now is asked again: after ttl, or at
// the end of the last RBAC change's settle when now is within it. Callers
// hold mu.
func (a *AccessReviews) expiry(now time.Time, ttl time.Duration) time.Time {
	expires := now.Add(ttl)
	if a.changedAt.IsZero() {
		return expires
	}
	if settled := a.changedAt.Add(rbacSettle); now.Before(settled) && settled.Before(expires) {
		return settled
	}
	return expires
}

// rulesOf returns user's rules in namespace, and false when they cannot
// answer: the rules review failed, or said its list is incomplete.
func (a *AccessReviews) rulesOf(ctx context.Context, asker authorizationv1client.AuthorizationV1Interface, user, namespace string) ([]rbacv1.PolicyRule, bool) {
	key := rulesKey{user: user, namespace: namespace}
	now := a.now()
	a.mu.Lock()
	ans, ok := a.rules[key]
	epoch, watched := a.epoch, a.watched != nil && a.watched()
	a.mu.Unlock()
	if ok && now.Before(ans.expires) {
		return ans.rules, ans.complete
	}
	rules, complete, err := a.askRules(ctx, asker, namespace)
	if err != nil {
		return nil, false // ask about the kind; that review's answer is kept
	}
	ttl := a.ttl
	if complete && watched {
		ttl = rulesMaxAge
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.epoch == epoch {
		if len(a.rules) >= maxReviewAnswers {
			sweep(a.rules, now, func(v rulesAnswer) time.Time { return v.expires })
		}
		a.rules[key] = rulesAnswer{rules: rules, complete: complete, expires: a.expiry(now, ttl)}
	}
	return rules, complete
}

// Made returns the number of reviews asked.
func (a *AccessReviews) Made() int64 { return a.made.Load() }

// ask returns nil when the API server allows the list.
func (a *AccessReviews) ask(ctx context.Context, asker authorizationv1client.AuthorizationV1Interface, key reviewKey) error {
	a.made.Add(1)
	review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
		ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: key.namespace, Verb: "list",
			Group: key.resource.Group, Resource: key.resource.Resource}}}
	res, err := asker.SelfSubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
	switch {
	case err != nil:
		return fmt.Errorf("failed to review list %s in %q: %w", key.resource, key.namespace, err)
	case !res.Status.Allowed || res.Status.Denied:
		return fmt.Errorf("list %s in %q is not allowed: %s", key.resource, key.namespace, res.Status.Reason)
	}
	return nil
}

// askRules asks the API server for the account's resource rules in
// namespace, and whether they are all of them.
func (a *AccessReviews) askRules(ctx context.Context, asker authorizationv1client.AuthorizationV1Interface, namespace string) ([]rbacv1.PolicyRule, bool, error) {
	a.made.Add(1)
	review := &authorizationv1.SelfSubjectRulesReview{Spec: authorizationv1.SelfSubjectRulesReviewSpec{Namespace: namespace}}
	res, err := asker.SelfSubjectRulesReviews().Create(ctx, review, metav1.CreateOptions{})
	if err != nil {
		return nil, false, fmt.Errorf("failed to review the rules in %q: %w", namespace, err)
	}
	rules := make([]rbacv1.PolicyRule, 0, len(res.Status.ResourceRules))
	for _, r := range res.Status.ResourceRules {
		rules = append(rules, rbacv1.PolicyRule{Verbs: r.Verbs, APIGroups: r.APIGroups, Resources: r.Resources, ResourceNames: r.ResourceNames})
	}
	return rules, !res.Status.Incomplete, nil
}

// sweep drops the expired answers, and all of them if none had expired.
// Callers hold mu.
func sweep[K comparable, V any](answers map[K]V, now time.Time, expires func(V) time.Time) {
	for k, v := range answers {
		if !now.Before(expires(v)) {
			delete(answers, k)
		}
	}
	if len(answers) >= maxReviewAnswers {
		clear(answers)
	}
}
