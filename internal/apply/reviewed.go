package apply

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	authorizationv1client "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The lifetimes of an account's answers. An allowed answer is kept as long
// as the API server's own webhook authorizer keeps one by default
// (--authorization-webhook-cache-authorized-ttl), a denied one or a failed
// review as long as it keeps a denial (…-unauthorized-ttl): a right granted
// is used within 30 s, and one revoked stops serving cached reads within
// the TTL (writes are always made, and authorized, as the account).
const (
	DefaultReviewTTL = 5 * time.Minute
	deniedReviewTTL  = 30 * time.Second
	// maxReviewAnswers bounds the answers kept, every account's: past it,
	// the expired go first, then all (a manifest naming thousands of
	// namespaces costs reviews, not memory). A fleet of 5,000 tenants
	// reading 7 kinds each keeps 35,000.
	maxReviewAnswers = 1 << 16
)

// ReviewedReader serves the reads of a pass that impersonates an account
// on the local cluster from the controller's informers, for each kind and
// namespace the account may list, and reads everything else live as the
// account. Whether it may list is asked of the API server by a
// SelfSubjectAccessReview made as the account (so with the very identity,
// groups included, its live reads would have), and the answer is kept per
// namespace and kind (AccessReviews).
//
// A get is served from the informers when the account may list the kind
// there: what it may list it may read whole, so the pass learns nothing
// the account could not. Nothing the account may not list reaches its
// pass: without an allowed answer the read goes to the API server as the
// account, which refuses it as it did before.
type ReviewedReader struct {
	// Cached holds the informers (the controller's own reads).
	Cached *CachedReader
	// Live reads as the account.
	Live client.Reader
	// Mapper maps a kind to the resource the review names.
	Mapper apimeta.RESTMapper
	// Reviews remembers the accounts' rights; Asker asks them of the API
	// server as User, the account.
	Reviews *AccessReviews
	Asker   authorizationv1client.SelfSubjectAccessReviewInterface
	User    string
}

var _ client.Reader = &ReviewedReader{}

// Get implements client.Reader.
func (r *ReviewedReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if r.mayList(ctx, obj, key.Namespace) {
		return r.Cached.getCached(ctx, key, obj, opts...)
	}
	return r.Live.Get(ctx, key, obj, opts...)
}

// List implements client.Reader.
func (r *ReviewedReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	lo := (&client.ListOptions{}).ApplyOptions(opts)
	if r.mayList(ctx, list, lo.Namespace) {
		return r.Cached.listCached(ctx, list, opts...)
	}
	return r.Live.List(ctx, list, opts...)
}

// mayList reports whether obj's kind is held by the informers and the
// account may list it in namespace ("" cluster-wide).
func (r *ReviewedReader) mayList(ctx context.Context, obj runtime.Object, namespace string) bool {
	if !r.Cached.cached(obj) {
		return false
	}
	gvk := obj.GetObjectKind().GroupVersionKind()
	m, err := r.Mapper.RESTMapping(schema.GroupKind{Group: gvk.Group, Kind: strings.TrimSuffix(gvk.Kind, "List")}, gvk.Version)
	if err != nil {
		return false // read live: the API server answers for the kind
	}
	return r.Reviews.MayList(ctx, r.Asker, r.User, namespace, m.Resource.GroupResource())
}

// AccessReviews asks the API server, as an account, whether it may list a
// resource in a namespace, and keeps the answers (allowed ones for TTL,
// others for 30 s), by account. A Targets has one for every account, so
// the answers outlive the clients it drops beyond its bound.
type AccessReviews struct {
	ttl time.Duration
	now func() time.Time

	mu      sync.Mutex
	answers map[reviewKey]reviewAnswer
	// made counts the reviews asked, for tests.
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

// NewAccessReviews returns AccessReviews that keep an allowed answer for
// ttl.
func NewAccessReviews(ttl time.Duration) *AccessReviews {
	return &AccessReviews{ttl: ttl, now: time.Now, answers: map[reviewKey]reviewAnswer{}}
}

// MayList reports whether user may list resource in namespace, asking
// through asker (a client impersonating user) when no answer is kept. A
// review that fails counts as a denial (the read then goes live, and the
// API server decides), kept for as long.
func (a *AccessReviews) MayList(ctx context.Context, asker authorizationv1client.SelfSubjectAccessReviewInterface, user, namespace string,
	resource schema.GroupResource) bool {
	key := reviewKey{user: user, namespace: namespace, resource: resource}
	now := a.now()
	a.mu.Lock()
	ans, ok := a.answers[key]
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
	if len(a.answers) >= maxReviewAnswers {
		a.sweep(now)
	}
	a.answers[key] = reviewAnswer{allowed: allowed, expires: now.Add(ttl)}
	return allowed
}

// Made returns the number of reviews asked.
func (a *AccessReviews) Made() int64 { return a.made.Load() }

// ask returns nil when the API server allows the list.
func (a *AccessReviews) ask(ctx context.Context, asker authorizationv1client.SelfSubjectAccessReviewInterface, key reviewKey) error {
	a.made.Add(1)
	review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
		ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: key.namespace, Verb: "list",
			Group: key.resource.Group, Resource: key.resource.Resource}}}
	res, err := asker.Create(ctx, review, metav1.CreateOptions{})
	switch {
	case err != nil:
		return fmt.Errorf("failed to review list %s in %q: %w", key.resource, key.namespace, err)
	case !res.Status.Allowed || res.Status.Denied:
		return fmt.Errorf("list %s in %q is not allowed: %s", key.resource, key.namespace, res.Status.Reason)
	}
	return nil
}

// sweep drops the expired answers, and all of them if none had expired.
// Callers hold mu.
func (a *AccessReviews) sweep(now time.Time) {
	for k, v := range a.answers {
		if !now.Before(v.expires) {
			delete(a.answers, k)
		}
	}
	if len(a.answers) >= maxReviewAnswers {
		clear(a.answers)
	}
}
