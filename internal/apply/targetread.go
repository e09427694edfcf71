package apply

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// This file holds how a pass reads its target: from informers or live.

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

// Expect tells Targets.Notice, on the local cluster, the kind and version
// of each object given, before the pass reads them. An informer syncs on
// its first read, so a pass that read a release's kinds one after another
// would wait for each kind's initial list in turn; told them all first,
// their watches start together and the lists run side by side.
func (t *Target) Expect(objects ...[]*unstructured.Unstructured) {
	if t.notice == nil {
		return
	}
	for _, group := range objects {
		for _, o := range group {
			t.notice(o.GroupVersionKind())
		}
	}
}

// ExpectKinds is Expect for kinds and versions the pass will list that no
// object of its release has: each watch a first read starts waits for its
// informer's initial list, so those started one read after another add
// their waits up, where started together they overlap.
func (t *Target) ExpectKinds(gvks ...schema.GroupVersionKind) {
	if t.notice == nil {
		return
	}
	for _, gvk := range gvks {
		t.notice(gvk)
	}
}

// Cached reports whether reads come from informers.
func (t *Target) Cached() bool { return t.Reader != nil }

// Fresh returns the target with every read made live: a pass confirms
// with it, before a delete, what the informers said.
func (t *Target) Fresh() *Target {
	c := *t
	c.Reader = nil
	return &c
}
