package target

import (
	"context"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Snapshot is a reader that asks r for each object, and each list, once
// and answers the same read again from what it got, a copy each time. A
// preview looks at one world several times (each object before its
// dry-run, then the add-on's read-only pass now, then again over the world
// the upgrade would leave): through a Snapshot, all of them see the same
// world and the server is asked once. A not-found answer is kept too;
// other errors are not. Typed objects are read from r every time.
type Snapshot struct {
	r     client.Reader
	mu    sync.Mutex
	gets  map[string]*snapshotGet
	lists map[string]*unstructured.UnstructuredList
}

type snapshotGet struct {
	obj      *unstructured.Unstructured
	notFound error
}

// NewSnapshot is an empty Snapshot of r, whose reads retry a failure that
// may pass, as a pass's live reads do.
func NewSnapshot(r client.Reader) *Snapshot {
	return &Snapshot{r: retryingReader{r}, gets: map[string]*snapshotGet{}, lists: map[string]*unstructured.UnstructuredList{}}
}

var _ client.Reader = &Snapshot{}

// Get implements client.Reader.
func (s *Snapshot) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok || len(opts) > 0 {
		return s.r.Get(ctx, key, obj, opts...)
	}
	k := u.GroupVersionKind().String() + " " + key.String()
	s.mu.Lock()
	got, hit := s.gets[k]
	s.mu.Unlock()
	if !hit {
		err := s.r.Get(ctx, key, u)
		switch {
		case apierrors.IsNotFound(err):
			got = &snapshotGet{notFound: err}
		case err != nil:
			return err
		default:
			got = &snapshotGet{obj: u.DeepCopy()}
		}
		s.mu.Lock()
		s.gets[k] = got
		s.mu.Unlock()
	}
	if got.notFound != nil {
		return got.notFound
	}
	got.obj.DeepCopyInto(u)
	return nil
}

// List implements client.Reader.
func (s *Snapshot) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	l, ok := list.(*unstructured.UnstructuredList)
	if !ok {
		return s.r.List(ctx, list, opts...)
	}
	lo := (&client.ListOptions{}).ApplyOptions(opts)
	if lo.Continue != "" || lo.Limit != 0 {
		return s.r.List(ctx, list, opts...)
	}
	k := fmt.Sprintf("%s %s %v %v", l.GroupVersionKind(), lo.Namespace, lo.LabelSelector, lo.FieldSelector)
	s.mu.Lock()
	got, hit := s.lists[k]
	s.mu.Unlock()
	if !hit {
		if err := s.r.List(ctx, l, opts...); err != nil {
			return err
		}
		got = l.DeepCopy()
		s.mu.Lock()
		s.lists[k] = got
		s.mu.Unlock()
		return nil
	}
	got.DeepCopyInto(l)
	return nil
}
