package target

import (
	"github.com/templatedrift/template-drift-controller/internal/plan"

	"context"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// readBackoff paces a pass's retries of a read that failed in a way that
// may pass: two more tries, 100 and 200 ms later. A pass reads some forty
// objects; without them one failed read in forty fails the whole pass,
// which the workqueue then retries with a back-off that doubles each time,
// so an API server that fails a few requests in a hundred held a release
// for minutes (the lossy scenario of `make chaos`). Writes are never retried here: the
// next pass reads again and decides again.
var readBackoff = wait.Backoff{Duration: 100 * time.Millisecond, Factor: 2, Jitter: 0.1, Steps: 3}

// retryingReader retries reads that fail in a way that may pass.
type retryingReader struct{ client.Reader }

// Get implements client.Reader.
func (r retryingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	return retry.OnError(readBackoff, retryable(ctx), func() error { return r.Reader.Get(ctx, key, obj, opts...) })
}

// List implements client.Reader.
func (r retryingReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return retry.OnError(readBackoff, retryable(ctx), func() error { return r.Reader.List(ctx, list, opts...) })
}

// retryable is plan.MayPass while ctx lives.
func retryable(ctx context.Context) func(error) bool {
	return func(err error) bool { return ctx.Err() == nil && plan.MayPass(err) }
}
