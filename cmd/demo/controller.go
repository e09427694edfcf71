package main

import (
	"context"
	"fmt"
	"time"

	"github.com/fluxcd/pkg/runtime/events"
	"github.com/prometheus/client_golang/prometheus"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/controllers"
	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/testenv"
)

// startController runs the controller in this process, wired as
// cmd/template-drift-controller wires it, and returns a function that stops
// it and waits for it.
func startController(ctx context.Context, env *testenv.Env) (func(), error) {
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme: testenv.Scheme(), Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
	})
	if err != nil {
		return nil, fmt.Errorf("failed to create manager: %w", err)
	}
	recorder, err := events.NewRecorder(ctrl.Log, "", api.ControllerName, events.WithManager(mgr))
	if err != nil {
		return nil, err
	}
	kinds, err := manifest.ParseKinds(manifest.DefaultTemplateKinds)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	_, err = controllers.Setup(ctx, mgr, controllers.Config{
		Kinds: kinds, MaxManifestBytes: manifest.DefaultMaxManifestBytes, DeleteWait: 10 * time.Second,
		ResyncInterval: 10 * time.Minute, Events: recorder, Metrics: prometheus.NewRegistry(), MaxConcurrentReconciles: 2,
	})
	if err != nil {
		cancel()
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	// The manager's exit error after cancel is dropped: the demo is over by then.
	return func() { cancel(); <-done }, nil //nolint:errcheck // see above
}
