// Command templatedrift shows the drift of the Cluster API templates of
// Flux HelmReleases and previews Helm upgrades, writing nothing, from a
// laptop or CI (internal/cli). Installed as kubectl-templatedrift, it is
// the kubectl plugin `kubectl templatedrift`.
package main

import (
	"os"

	"github.com/templatedrift/template-drift-controller/internal/cli"
)

func main() {
	os.Exit(cli.Execute(cli.NameOf(os.Args[0]), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
