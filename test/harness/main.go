package harness

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// Main runs a harness command: run gets a context that SIGINT and SIGTERM
// cancel, so that every process the run started is stopped; an error is
// printed after name and exits 1. The harness's own client warnings
// (deprecated API versions of the fixtures) are not results, so
// controller-runtime's log is discarded.
func Main(name string, run func(context.Context) error) {
	ctrllog.SetLogger(logr.Discard())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		os.Exit(1)
	}
}
