package scale

import (
	"context"

	"github.com/templatedrift/template-drift-controller/test/harness"
)

// HelmControllerSpecInput is what HelmControllerSpec takes.
type HelmControllerSpecInput struct {
	Run
	// Bin is helm-controller's binary, and SourceCRDs the folder of
	// source-controller's CRDs, whose HelmChart its releases name
	// (LocateHelmController).
	Bin        string
	SourceCRDs string
}

// HelmControllerSpec measures helm-controller with driftDetection.mode
// warn on the add-on's fleet, for comparison, on a control plane of its
// own: each release also has a HelmChart, Ready with an artifact on a
// chart server the spec runs, and the status helm-controller leaves after
// an install. It converges on Ready at each release's generation, must
// upgrade none, and heals nothing, so its reaction is not measured.
func HelmControllerSpec(ctx context.Context, in HelmControllerSpecInput) (res Result, err error) {
	s, res, err := begin(in.Run, HelmController)
	if err != nil {
		return res, err
	}
	defer func() { s.end(err == nil) }()
	c := helmControllerProcess(in.Bin)
	s.by("start the control plane")
	cp, err := startControlPlane(s, controlPlaneInput{policy: harness.MetadataPolicy, crdDirs: []string{in.SourceCRDs}, user: c.user, groups: masters})
	if err != nil {
		return res, s.failed(err)
	}
	res.ControlPlaneStartSeconds = cp.startSeconds
	s.by("create the fleet")
	res.SetupSeconds, err = timed(func() error {
		chart, err := ServeChart()
		if err != nil {
			return err
		}
		s.deferCleanup(func(bool) { chart.Close() })
		return createFleet(ctx, cp.env, in.N, 1, resync, chart, in.Fleet.Render)
	})
	if err != nil {
		return res, s.failed(err)
	}
	hrs, p, err := startMeasuring(ctx, s, &res, cp, c)
	if err != nil {
		return res, err
	}
	s.by("converge")
	convergence, cpu, err := converge(ctx, s, hrs, p, notReconciled)
	if err == nil {
		err = checkNotUpgraded(ctx, hrs)
	}
	if err != nil {
		return res, s.failed(err)
	}
	s.by("measure the steady state")
	st, err := measureSteadyState(ctx, in.Window, cp, p)
	if err != nil {
		return res, s.failed(err)
	}
	s.by("count the requests")
	if err := collect(ctx, &res, cp, c.user, convergence, cpu, st); err != nil {
		return res, s.failed(err)
	}
	return res, nil
}
