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

// watchHelmReleases starts the harness's own informer of the fleet's
// HelmReleases, synced before the controller starts. The convergence is
// judged from it: a list of every HelmRelease at each poll (every second
// at 5,000) had the API server encode and the harness decode the whole
// fleet again and again on the 2 cores the controller and the API server
// share, where the watch sends each status change once.
func (r *run) watchHelmReleases(ctx context.Context) error {
	c, err := ctrlcache.New(r.env.Config, ctrlcache.Options{Scheme: testenv.Scheme(), ByObject: map[client.Object]ctrlcache.ByObject{
		&helmv2.HelmRelease{}: {UnsafeDisableDeepCopy: ptr.To(true)},
	}})
	if err != nil {
		return fmt.Errorf("failed to create the harness's cache: %w", err)
	}
	if _, err := c.GetInformer(ctx, &helmv2.HelmRelease{}); err != nil {
		return fmt.Errorf("failed to watch the HelmReleases: %w", err)
	}
	watchCtx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Start(watchCtx) }()
	r.stopWatch = func() {
		cancel()
		if err := <-done; err != nil {
			r.logf("N=%d: the harness's HelmRelease informer: %v", r.n, err)
		}
	}
	if !c.WaitForCacheSync(ctx) {
		return errors.New("the harness's HelmRelease informer did not sync")
	}
	r.hrs = c
	return nil
}
