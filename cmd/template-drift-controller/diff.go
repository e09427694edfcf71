package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	flag "github.com/spf13/pflag"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/internal/diffreport"
	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/pipeline"
	"github.com/templatedrift/template-drift-controller/internal/plan"
	"github.com/templatedrift/template-drift-controller/internal/release"
	"github.com/templatedrift/template-drift-controller/internal/target"
)

const diffUsage = `Usage: template-drift-controller diff [-n NAMESPACE] [-o text|json] HELMRELEASE

Compares the templates of a HelmRelease's stored Helm release with the live
ones, through the same pipeline as the controller, and writes nothing. It
prints each drifted template, its JSON paths with before → after values, and
what the HelmRelease's strategy (auto unless templatedrift.io/strategy says
otherwise) would do. Exit code: 0 in sync, 1 drift found, 2 error.
`

// runDiff is the `diff` subcommand; it returns the process exit code.
func runDiff(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("diff", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, diffUsage); fs.PrintDefaults() }
	namespace := fs.StringP("namespace", "n", "", "The HelmRelease namespace (default: the kubeconfig context's).")
	output := fs.StringP("output", "o", "text", "Output format: text or json.")
	kubeconfig := fs.String("kubeconfig", "", "Path to a kubeconfig (default: $KUBECONFIG or ~/.kube/config).")
	kubeContext := fs.String("context", "", "The kubeconfig context to use.")
	kinds := fs.StringSlice("template-kinds", manifest.DefaultTemplateKinds, "The template kinds, as group/KindPattern globs.")
	sa := fs.String("default-service-account", "", "The service account impersonated for HelmReleases that name none.")
	rollouts := fs.String("rollouts", plan.RolloutsDeny.String(), "The controller's --rollouts: the rollout policy of a HelmRelease that sets none (deny or allow).")
	timeout := fs.Duration("timeout", time.Minute, "How long the diff may take.")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return diffreport.ExitInSync // asked for help: not an error, as the controller's --help
		}
		return diffreport.ExitError
	}
	if fs.NArg() != 1 || (*output != "text" && *output != "json") {
		fs.Usage()
		return diffreport.ExitError
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	d, err := diffHelmRelease(ctx, diffOptions{name: fs.Arg(0), namespace: *namespace, kubeconfig: *kubeconfig,
		context: *kubeContext, kinds: *kinds, defaultSA: *sa, rollouts: *rollouts})
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return diffreport.ExitError
	}
	if *output == "json" {
		err = d.WriteJSON(stdout)
	} else {
		err = d.WriteText(stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return diffreport.ExitError
	}
	return d.ExitCode()
}

type diffOptions struct {
	name, namespace, kubeconfig, context, defaultSA, rollouts string
	kinds                                                     []string
}

func diffHelmRelease(ctx context.Context, o diffOptions) (diffreport.DiffReport, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = o.kubeconfig
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: o.context})
	cfg, err := cc.ClientConfig()
	if err != nil {
		return diffreport.DiffReport{}, fmt.Errorf("failed to load kubeconfig: %w", err)
	}
	ns := o.namespace
	if ns == "" {
		if ns, _, err = cc.Namespace(); err != nil {
			return diffreport.DiffReport{}, fmt.Errorf("failed to read the kubeconfig namespace: %w", err)
		}
	}
	kinds, err := manifest.ParseKinds(o.kinds)
	if err != nil {
		return diffreport.DiffReport{}, err
	}
	scheme := newScheme()
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return diffreport.DiffReport{}, fmt.Errorf("failed to create client: %w", err)
	}
	hr := &helmv2.HelmRelease{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: o.name}, hr); err != nil {
		return diffreport.DiffReport{}, fmt.Errorf("failed to get HelmRelease %s/%s: %w", ns, o.name, err)
	}
	targets := &target.Targets{Local: cfg, Reader: c, Scheme: scheme, DefaultServiceAccount: o.defaultSA}
	tg, err := targets.For(ctx, hr)
	if err != nil {
		return diffreport.DiffReport{}, err
	}
	rollouts, err := plan.ParseRolloutPolicy(o.rollouts)
	if err != nil {
		return diffreport.DiffReport{}, fmt.Errorf("--rollouts: %w", err)
	}
	engine := &pipeline.Engine{Kinds: kinds, Releases: release.NewReader(manifest.DefaultMaxManifestBytes),
		MaxManifestBytes: manifest.DefaultMaxManifestBytes, Rollouts: rollouts}
	res, err := engine.Run(ctx, pipeline.Request{HelmRelease: hr, Target: tg, ReadOnly: true})
	if err != nil {
		return diffreport.DiffReport{}, err
	}
	return diffreport.NewDiffReport(ns+"/"+o.name, res), nil
}

// subcommand dispatches `diff`, `preview` and `check-metrics`; it returns
// false for the controller itself.
func subcommand(args []string) (int, bool) {
	if len(args) == 0 {
		return 0, false
	}
	switch args[0] {
	case "diff":
		return runDiff(args[1:], os.Stdout, os.Stderr), true
	case "preview":
		return runPreview(args[1:], os.Stdout, os.Stderr), true
	case "check-metrics":
		return runCheckMetrics(args[1:], os.Stdout, os.Stderr), true
	}
	return 0, false
}
