package release

import (
	"context"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
)

// WarmSelector selects the release Secrets a warm-up reads: Helm's, less
// the superseded versions, which are most of a release's history and which
// a pass reads only after an upgrade it compares with.
const WarmSelector = "owner=helm,status!=superseded"

// DefaultWarmPageSize is how many Secrets one list page of a warm-up holds:
// a page is in memory whole while it is decoded, and a large chart's
// release Secret is up to 1 MiB.
const DefaultWarmPageSize = 100

// WarmResult says what a warm-up did.
type WarmResult struct {
	// Listed counts the Secrets listed, Decoded those decoded into the memo
	// (wanted, and not memoized already at that resourceVersion).
	Listed, Decoded int
	// Pages counts the list requests.
	Pages int
	// Full is true when the warm-up stopped because the memo was full: what
	// it decoded beyond would only push out what it decoded before.
	Full bool
}

// Warm decodes into the memo, under src.Key, the release Secrets of every
// namespace that want names (by storage namespace and release name), from
// a paged list of WarmSelector. A controller that starts with thousands of
// releases would otherwise read each release Secret with one request on its
// first pass; a warm-up reads them in a few pages, and those passes find the
// releases memoized. An entry is still bound to the Secret's UID and
// resourceVersion, so a Secret that changes after the list is read again
// as usual, and a warm-up that fails part way costs only requests: the
// passes read what it did not reach.
//
// src.Key must name the identity that lists: an entry is used by the passes
// that read through the same key, and an identity that may not read a
// Secret must not find it memoized.
func (r *Reader) Warm(ctx context.Context, src Source, want func(namespace, release string) bool, pageSize int64) (WarmResult, error) {
	var res WarmResult
	if src.Secrets == nil {
		return res, fmt.Errorf("failed to warm the release memo: source %q has no Secrets client", src.Key)
	}
	if pageSize <= 0 {
		pageSize = DefaultWarmPageSize
	}
	opts := metav1.ListOptions{LabelSelector: WarmSelector, Limit: pageSize}
	for {
		if r.memo.full() {
			res.Full = true
			return res, nil
		}
		list, err := src.Secrets.Secrets(metav1.NamespaceAll).List(ctx, opts)
		if apierrors.IsResourceExpired(err) && opts.Continue != "" {
			// The continue token expired (compaction): the rest is read by
			// the passes, one Secret each.
			return res, nil
		}
		if err != nil {
			return res, fmt.Errorf("failed to list release Secrets (%s) to warm the release memo: %w", WarmSelector, err)
		}
		res.Pages++
		for i := range list.Items {
			if r.memo.full() {
				res.Full = true
				return res, nil
			}
			res.Listed++
			decoded, err := r.warmOne(ctx, src.Key, &list.Items[i], want)
			if err != nil {
				return res, err
			}
			if decoded {
				res.Decoded++
			}
		}
		if opts.Continue = list.Continue; opts.Continue == "" {
			return res, nil
		}
	}
}

// warmOne decodes s into the memo when it is a Secret Helm's driver wrote,
// want names its release, and the memo lacks that exact version of it. A
// Secret that does not decode is memoized as the error a pass would get,
// as Get does.
func (r *Reader) warmOne(ctx context.Context, source string, s *corev1.Secret, want func(namespace, release string) bool) (bool, error) {
	name := s.Labels["name"]
	version, err := strconv.Atoi(s.Labels["version"])
	if err != nil || name == "" || s.Name != SecretName(name, version) || !want(s.Namespace, name) {
		return false, nil
	}
	key := memoKey{source: source, namespace: s.Namespace, name: s.Name}
	if _, ok := r.memo.get(key, s.UID, s.ResourceVersion); ok {
		return false, nil
	}
	e, err := r.decode(ctx, listedSecret{secret: s}, key, name, version)
	if err != nil {
		return false, err
	}
	if e.uid == "" {
		return false, nil
	}
	r.memo.put(e)
	return true, nil
}

// listedSecret serves one Secret already listed to Helm's driver, which
// reads a release with Get: the decode path is the one a pass uses, from
// bytes already here. Every other call fails (nil interface), and none is
// made: boundSecrets refuses the writes before they reach it.
type listedSecret struct {
	corev1client.SecretInterface
	secret *corev1.Secret
}

// Get returns the listed Secret if name is its name.
func (l listedSecret) Get(_ context.Context, name string, _ metav1.GetOptions) (*corev1.Secret, error) {
	if name != l.secret.Name {
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, name)
	}
	return l.secret, nil
}
