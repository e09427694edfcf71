package scale

import (
	"context"
	"errors"
	"fmt"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"k8s.io/utils/ptr"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/internal/testenv"
)

// hrWatch is the harness's own informer of the fleet's HelmReleases, which
// the convergence is judged from.
type hrWatch struct {
	cache client.Reader
	n     int
}

// watchHelmReleases starts the harness's informer of the fleet's
// HelmReleases on cp, synced before the controller starts; the session
// stops it when the spec ends. A list of every HelmRelease at each poll
// had the API server encode and the harness decode the whole fleet again
// and again on the cores the controller and the API server share, where
// the watch sends each status change once.
func watchHelmReleases(ctx context.Context, s *session, cp *controlPlane) (*hrWatch, error) {
	c, err := ctrlcache.New(cp.env.Config, ctrlcache.Options{Scheme: testenv.Scheme(), ByObject: map[client.Object]ctrlcache.ByObject{
		&helmv2.HelmRelease{}: {UnsafeDisableDeepCopy: ptr.To(true)},
	}})
	if err != nil {
		return nil, fmt.Errorf("failed to create the harness's cache: %w", err)
	}
	if _, err := c.GetInformer(ctx, &helmv2.HelmRelease{}); err != nil {
		return nil, fmt.Errorf("failed to watch the HelmReleases: %w", err)
	}
	watchCtx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Start(watchCtx) }()
	s.deferCleanup(func(bool) {
		cancel()
		if err := <-done; err != nil {
			s.logf("the harness's HelmRelease informer: %v", err)
		}
	})
	if !c.WaitForCacheSync(ctx) {
		return nil, errors.New("the harness's HelmRelease informer did not sync")
	}
	return &hrWatch{cache: c, n: s.run.N}, nil
}

// list lists the fleet's HelmReleases from the informer, without copies:
// the callers only read them.
func (w *hrWatch) list(ctx context.Context) ([]helmv2.HelmRelease, error) {
	var list helmv2.HelmReleaseList
	if err := w.cache.List(ctx, &list); err != nil {
		return nil, err
	}
	if len(list.Items) != w.n {
		return nil, fmt.Errorf("found %d HelmReleases, want %d", len(list.Items), w.n)
	}
	return list.Items, nil
}
