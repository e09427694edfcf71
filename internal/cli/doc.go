// Package cli is the templatedrift command line, for laptops and CI: the
// read-only `diff` (a warn pass of internal/pipeline, formatted by
// internal/diffreport) and `preview` (internal/preview) commands, with
// kubectl's kubeconfig flags, generated help, shell completion and
// `version`. cmd/templatedrift runs it, also as the kubectl plugin
// kubectl-templatedrift; the controller binary's deprecated `diff` and
// `preview` subcommands run the same commands. It holds what the two
// commands share once: how they reach the cluster (cluster.go), which
// HelmReleases they look at (-l, -A) and in which format, and the
// controller's settings their passes follow (fleet.go).
package cli
