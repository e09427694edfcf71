package chaos

import (
	"context"
	"fmt"
	"time"

	"github.com/templatedrift/template-drift-controller/test/harness"
)

// RestartInput is the restart and compact scenarios'.
type RestartInput struct {
	Input
	// Restarts is how many times kube-apiserver is restarted.
	Restarts int
}

// RestartSpec restarts kube-apiserver on the same etcd in.Restarts times,
// 1-5 s apart, while the controller corrects; the controller is never
// restarted, and must not exit.
func RestartSpec(ctx context.Context, in RestartInput) (res Result, err error) {
	w := newWorld(in.Input, ScenarioRestart, worldOptions{})
	defer func() { w.stop(err) }()
	if err := w.setUp(ctx, nil); err != nil {
		return w.res, err
	}
	w.res.Fault = fmt.Sprintf("%d kube-apiserver restarts (same etcd), 1s-5s apart", in.Restarts)
	err = w.step("inject the fault", func() error {
		pid := w.controller.PID()
		for i := range in.Restarts {
			if err := harness.Sleep(ctx, w.between(time.Second, 5*time.Second)); err != nil {
				return err
			}
			if err := w.restartAPIServer(i+1, in.Restarts); err != nil {
				return err
			}
		}
		if w.controller.Exited() || w.controller.PID() != pid {
			w.res.violate(InvConverged, "the controller exited during the API server restarts (see "+w.controller.LogPath+")")
		}
		return nil
	})
	if err != nil {
		return w.res, err
	}
	w.faultsStopped(ctx)
	return w.conclude(ctx, checks{}, nil)
}
