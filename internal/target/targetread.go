package target

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/internal/manifest"
)

// This file is the door a pass reads its target through. It behaves like a
// live client; how each read is served stays behind it.

// Read returns the reader of the pass's reads: Reader, or Client, whose
// live reads retry a failure that may pass (retryingReader); on the local
// cluster, one that tells Targets.Notice what it reads.
func (t *Target) Read() client.Reader {
	r := client.Reader(retryingReader{t.Client})
	if t.Reader != nil {
		r = t.Reader
	}
	if t.notice != nil {
		return noticingReader{Reader: r, notice: t.notice}
	}
	return r
}

// Ask returns the client of the pass's dry-runs that confirm drift, which
// asks the server only what it has not answered before: DryRuns, or
// Client. Dry-runs stored nothing, so they are reads; the pass's writes,
// and the dry-run a recreate makes before its delete, go to Client.
func (t *Target) Ask() client.Client {
	if t.DryRuns != nil {
		return t.DryRuns
	}
	return t.Client
}

// GetEach reads the live counterpart of each of objs, in their order; nil
// for one that does not exist. The kinds are told to Targets.Notice before
// the first read, with every other kind that may use a template (at the
// server's preferred version), which a pass lists next: an informer syncs
// on its first read, so kinds read one after another would wait for each
// initial list in turn, where told together their lists run side by side.
func (t *Target) GetEach(ctx context.Context, objs []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	if t.notice != nil {
		t.expect(append(kindsOf(objs), t.otherUserKinds(objs)...))
	}
	r := t.Read()
	out := make([]*unstructured.Unstructured, len(objs))
	for i, o := range objs {
		live, err := Get(ctx, r, o.GroupVersionKind(), o.GetNamespace(), o.GetName())
		if err != nil {
			return nil, err
		}
		out[i] = live
	}
	return out, nil
}

// ListEach lists, in namespace, the objects of each kind (ListServed). As
// GetEach, the kinds are told to Targets.Notice together before the first
// list.
func (t *Target) ListEach(ctx context.Context, namespace string, kinds []schema.GroupVersionKind) ([]*unstructured.Unstructured, error) {
	mapper := t.Client.RESTMapper()
	gvks, err := servedVersions(mapper, kinds)
	if err != nil {
		return nil, err
	}
	t.expect(gvks)
	return listServed(ctx, t.Read(), mapper, namespace, gvks)
}

// ListServed lists, in namespace, the objects of each kind: at the version
// given, or, for a kind given without one, at the version the server
// prefers. A kind the server does not serve lists nothing: a cluster
// without MachinePools, or without RKE2, has none. The mapper (ServedKinds)
// answers that from memory after the first time; a kind whose
// CustomResourceDefinition went after the mapper learnt of it is answered
// 404, and the mapper is told.
func ListServed(ctx context.Context, c client.Reader, mapper apimeta.RESTMapper, namespace string, kinds []schema.GroupVersionKind) ([]*unstructured.Unstructured, error) {
	gvks, err := servedVersions(mapper, kinds)
	if err != nil {
		return nil, err
	}
	return listServed(ctx, c, mapper, namespace, gvks)
}

// servedVersions gives each kind without a version the server's preferred
// one, and leaves out the kinds the server does not serve.
func servedVersions(mapper apimeta.RESTMapper, kinds []schema.GroupVersionKind) ([]schema.GroupVersionKind, error) {
	gvks := make([]schema.GroupVersionKind, 0, len(kinds))
	for _, k := range kinds {
		if k.Version == "" {
			mapping, err := mapper.RESTMapping(k.GroupKind())
			if apimeta.IsNoMatchError(err) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("failed to find the served version of %s: %w", k.GroupKind(), err)
			}
			k = mapping.GroupVersionKind
		}
		gvks = append(gvks, k)
	}
	return gvks, nil
}

// listServed lists each of gvks, served versions, in namespace; a 404
// tells the mapper the kind went.
func listServed(ctx context.Context, c client.Reader, mapper apimeta.RESTMapper, namespace string, gvks []schema.GroupVersionKind) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, gvk := range gvks {
		objs, err := List(ctx, c, gvk, namespace)
		if apierrors.IsNotFound(err) {
			if m, ok := mapper.(unservedMarker); ok {
				m.MarkUnserved(gvk.GroupKind())
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	return out, nil
}

// kindsOf lists the kind and version of each of objs.
func kindsOf(objs []*unstructured.Unstructured) []schema.GroupVersionKind {
	out := make([]schema.GroupVersionKind, 0, len(objs))
	for _, o := range objs {
		out = append(out, o.GroupVersionKind())
	}
	return out
}

// otherUserKinds are the kinds that may use a template (manifest.UserKinds)
// that none of objs has, at the server's preferred version; a kind the
// server does not serve is left out.
func (t *Target) otherUserKinds(objs []*unstructured.Unstructured) []schema.GroupVersionKind {
	has := map[schema.GroupKind]bool{}
	for _, o := range objs {
		has[o.GroupVersionKind().GroupKind()] = true
	}
	var out []schema.GroupVersionKind
	for _, gk := range manifest.UserKinds() {
		if has[gk] {
			continue
		}
		if mapping, err := t.Client.RESTMapper().RESTMapping(gk); err == nil {
			out = append(out, mapping.GroupVersionKind)
		}
	}
	return out
}

// expect tells Targets.Notice, on the local cluster, the kinds a pass is
// about to read.
func (t *Target) expect(gvks []schema.GroupVersionKind) {
	if t.notice == nil {
		return
	}
	for _, gvk := range gvks {
		t.notice(gvk)
	}
}
