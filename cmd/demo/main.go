// Command demo shows the problem this add-on solves and its cure, on a
// local control plane (the same kube-apiserver and etcd the tests use):
// templates left pointing at a dead bootstrap cluster after a pivot, healed
// in place; then a locked template, healed by rotation; then the preview of
// two chart changes, one that would fail and one that rolls a
// MachineDeployment. `make demo` runs it.
// With DEMO_KEEP=1 it leaves the control plane up until interrupted.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/templatedrift/template-drift-controller/internal/testenv"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "demo failed: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	start := time.Now()
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()

	logFile, err := os.CreateTemp("", "tdc-demo-controller-*.log")
	if err != nil {
		return err
	}
	defer logFile.Close()
	ctrl.SetLogger(zap.New(zap.WriteTo(logFile), zap.UseDevMode(false)))

	heading("Starting a local control plane")
	env, err := testenv.StartWith("demo", testenv.Options{Managers: true})
	if err != nil {
		return err
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}()
	fmt.Printf("kube-apiserver %s and etcd %s at %s, with the Flux HelmRelease CRD and the real Cluster API and\n"+
		"Metal3 (CAPM3) managers running, with their conversion and admission webhooks\n",
		env.Paths.KubeVersion, env.Paths.EtcdVersion, env.Config.Host)
	fmt.Println("Note: the demo writes the Helm release and the HelmRelease history exactly as helm-controller v1.6.4")
	fmt.Println("does (Helm v4 storage driver, snapshot digest); the e2e suite runs the real Flux controllers.")

	stop, err := startController(ctx, env)
	if err != nil {
		return err
	}
	defer stop()

	for _, s := range scenarios {
		if err := s.run(ctx, env); err != nil {
			return fmt.Errorf("%s: %w", s.title, err)
		}
	}
	if err := previewChanges(ctx, env); err != nil {
		return fmt.Errorf("preview: %w", err)
	}
	fmt.Printf("\nController log: %s\n", logFile.Name())
	if os.Getenv("DEMO_KEEP") == "1" {
		heading("DEMO_KEEP=1: the control plane stays up")
		fmt.Printf("export KUBECONFIG=%s\nkubectl get helmreleases,metal3machinetemplates,metal3datatemplates -A\n", env.KubeConfigPath)
		fmt.Println("Press Ctrl-C to stop it.")
		<-ctx.Done()
	}
	fmt.Printf("\nDemo finished in %s; stopping the control plane, nothing is left running.\n", time.Since(start).Round(time.Second))
	return nil
}

func heading(s string) { fmt.Printf("\n== %s\n", s) }
