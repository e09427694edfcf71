package main

import (
	"fmt"
	"io"
	"os"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/cli"
)

// deprecatedCLI runs `template-drift-controller diff|preview ...`: the
// templatedrift command's diff and preview (internal/cli), which replace
// them, after a one-line notice on stderr. args begins with the command.
func deprecatedCLI(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintf(stderr, "warning: `%[1]s %[2]s` is deprecated and will be removed in a later release: use `%[3]s %[2]s` (or `kubectl %[3]s %[2]s`)\n",
		api.ControllerName, args[0], cli.Name)
	return cli.Execute(api.ControllerName, args, os.Stdin, stdout, stderr)
}

// subcommand dispatches `diff` and `preview` (deprecated, see
// deprecatedCLI) and `check-metrics`; it returns false for the controller
// itself.
func subcommand(args []string) (int, bool) {
	if len(args) == 0 {
		return 0, false
	}
	switch args[0] {
	case "diff", "preview":
		return deprecatedCLI(args, os.Stdout, os.Stderr), true
	case "check-metrics":
		return runCheckMetrics(args[1:], os.Stdout, os.Stderr), true
	}
	return 0, false
}
