package target

import (
	"context"
	"errors"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// failingReader fails its first n reads with err.
type failingReader struct {
	client.Reader
	err   error
	n     int
	calls int
}

func (f *failingReader) Get(context.Context, client.ObjectKey, client.Object, ...client.GetOption) error {
	f.calls++
	if f.calls <= f.n {
		return f.err
	}
	return nil
}

func (f *failingReader) List(context.Context, client.ObjectList, ...client.ListOption) error {
	f.calls++
	if f.calls <= f.n {
		return f.err
	}
	return nil
}

// TestRetryingReader: a read that fails in a way that may pass is tried
// twice more, not a refusal, and not once the pass is cancelled.
func TestRetryingReader(t *testing.T) {
	boom := apierrors.NewInternalError(errors.New("boom"))
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	cases := []struct {
		name      string
		ctx       context.Context
		err       error
		n         int
		wantErr   bool
		wantCalls int
	}{
		{name: "two 500s, then the answer", ctx: context.Background(), err: boom, n: 2, wantCalls: 3},
		{name: "three 500s: the pass fails", ctx: context.Background(), err: boom, n: 3, wantErr: true, wantCalls: 3},
		{name: "a 404 is the answer", ctx: context.Background(), err: apierrors.NewNotFound(schema.GroupResource{}, "x"), n: 1, wantErr: true, wantCalls: 1},
		{name: "a cancelled pass is not retried", ctx: cancelled, err: boom, n: 1, wantErr: true, wantCalls: 1},
	}
	for _, tc := range cases {
		for _, verb := range []string{"get", "list"} {
			t.Run(tc.name+" ("+verb+")", func(t *testing.T) {
				g := NewWithT(t)
				f := &failingReader{err: tc.err, n: tc.n}
				r := retryingReader{f}
				var err error
				if verb == "get" {
					err = r.Get(tc.ctx, client.ObjectKey{Name: "x"}, &corev1.ConfigMap{})
				} else {
					err = r.List(tc.ctx, &corev1.ConfigMapList{})
				}
				g.Expect(err != nil).To(Equal(tc.wantErr), "%v", err)
				g.Expect(f.calls).To(Equal(tc.wantCalls))
			})
		}
	}
}
