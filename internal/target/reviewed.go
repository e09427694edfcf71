package target

import (
	"context"
	"strings"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	authorizationv1client "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
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
	Asker   authorizationv1client.AuthorizationV1Interface
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
