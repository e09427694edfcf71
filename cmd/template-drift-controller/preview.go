package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	runtimeclient "github.com/fluxcd/pkg/runtime/client"
	flag "github.com/spf13/pflag"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/strvals"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/plan"
	"github.com/templatedrift/template-drift-controller/internal/preview"
	"github.com/templatedrift/template-drift-controller/internal/render"
)

const previewUsage = `Usage: template-drift-controller preview [-n NAMESPACE] HELMRELEASE | -l SELECTOR | -A
         [--values FILE]... [--set KEY=VALUE]... [--helmrelease FILE] [--chart PATH]
         [-o text|json|markdown] [--fail-on failure|rollout|change]

Predicts what the Helm upgrade of a HelmRelease would do, before the change
merges: it renders the chart as helm-controller does, with the change, then
asks the API server, through dry-runs only, what each object would become.
It says which objects the server refuses (the upgrade fails, with the
webhook's message), which MachineDeployments and control planes roll and how
many Machines, and which templates change in place. It writes nothing: every
request with a write verb carries dryRun=All, so it needs the write verbs in
RBAC. Exit code: 0 when nothing reaches --fail-on (default failure), 1 when
something does, 2 on an error.
`

type previewOptions struct {
	name, namespace, selector, kubeconfig, context string
	all                                            bool
	valuesFiles, sets                              []string
	helmReleaseFile, chartPath                     string
	kinds                                          []string
	rollouts                                       string
	// client holds --kube-api-qps and --kube-api-burst, the controller's
	// flags with its defaults. A fleet's previews share one client, and
	// client-go's own default (5 requests a second) made `-A` wait on it
	// (docs/benchmarks.md).
	client runtimeclient.Options
}

// runPreview is the `preview` subcommand; it returns the process exit code.
func runPreview(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("preview", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, previewUsage); fs.PrintDefaults() }
	var o previewOptions
	fs.StringVarP(&o.namespace, "namespace", "n", "", "The HelmRelease namespace (default: the kubeconfig context's).")
	fs.StringVarP(&o.selector, "selector", "l", "", "Preview every HelmRelease with these labels (in the namespace, or all with -A).")
	fs.BoolVarP(&o.all, "all-namespaces", "A", false, "Preview the HelmReleases of every namespace.")
	fs.StringArrayVar(&o.valuesFiles, "values", nil, "A values file that replaces spec.values (repeatable: merged in order).")
	fs.StringArrayVar(&o.sets, "set", nil, "KEY=VALUE set in spec.values after --values (repeatable, Helm's --set syntax).")
	fs.StringVar(&o.helmReleaseFile, "helmrelease", "", "The proposed HelmRelease YAML: its values, valuesFrom, postRenderers, commonMetadata, releaseName, targetNamespace, storageNamespace and upgrade settings are used.")
	fs.StringVar(&o.chartPath, "chart", "", "The proposed chart (a folder or .tgz); default: the chart the stored release keeps.")
	output := fs.StringP("output", "o", "text", "Output format: text, json or markdown.")
	failOn := fs.String("fail-on", string(preview.FailOnFailure), "Exit 1 when this much or more is predicted: failure, rollout or change.")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "Path to a kubeconfig (default: $KUBECONFIG or ~/.kube/config).")
	fs.StringVar(&o.context, "context", "", "The kubeconfig context to use.")
	fs.StringSliceVar(&o.kinds, "template-kinds", manifest.DefaultTemplateKinds, "The template kinds, as group/KindPattern globs.")
	fs.StringVar(&o.rollouts, "rollouts", plan.RolloutsDeny.String(), "The controller's --rollouts: the rollout policy of a HelmRelease that sets none (deny or allow).")
	timeout := fs.Duration("timeout", 5*time.Minute, "How long the preview may take.")
	o.client.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return preview.ExitOK
		}
		return preview.ExitError
	}
	level, err := preview.ParseFailOn(*failOn)
	if err == nil {
		err = o.check(fs.Args(), *output)
	}
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		fs.Usage()
		return preview.ExitError
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	reports, err := previewHelmReleases(ctx, o)
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return preview.ExitError
	}
	switch *output {
	case "json":
		err = preview.WriteJSON(stdout, reports)
	case "markdown":
		err = preview.WriteMarkdown(stdout, reports)
	default:
		err = preview.WriteText(stdout, reports)
	}
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return preview.ExitError
	}
	return preview.ExitCode(reports, level)
}

// check validates the arguments: one HelmRelease by name, or a fleet by
// selector or -A, and a change that fits it.
func (o *previewOptions) check(args []string, output string) error {
	switch output {
	case "text", "json", "markdown":
	default:
		return fmt.Errorf("-o %q: want text, json or markdown", output)
	}
	switch {
	case len(args) == 1 && o.selector == "" && !o.all:
		o.name = args[0]
	case len(args) == 0 && (o.selector != "" || o.all):
		if o.helmReleaseFile != "" {
			return errors.New("--helmrelease proposes one HelmRelease: name it instead of -l or -A")
		}
	default:
		return errors.New("name one HelmRelease, or select a fleet with -l or -A")
	}
	return nil
}

func previewHelmReleases(ctx context.Context, o previewOptions) ([]preview.Report, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = o.kubeconfig
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: o.context})
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("failed to load kubeconfig: %w", err)
	}
	cfg.QPS, cfg.Burst = o.client.QPS, o.client.Burst
	if o.namespace == "" && !o.all {
		if o.namespace, _, err = cc.Namespace(); err != nil {
			return nil, fmt.Errorf("failed to read the kubeconfig namespace: %w", err)
		}
	}
	kinds, err := manifest.ParseKinds(o.kinds)
	if err != nil {
		return nil, err
	}
	rollouts, err := plan.ParseRolloutPolicy(o.rollouts)
	if err != nil {
		return nil, fmt.Errorf("--rollouts: %w", err)
	}
	c, err := client.New(cfg, client.Options{Scheme: newScheme()})
	if err != nil {
		return nil, fmt.Errorf("failed to create client: %w", err)
	}
	hrs, err := o.helmReleases(ctx, c)
	if err != nil {
		return nil, err
	}
	var proposedChart *chart.Chart
	if o.chartPath != "" {
		if proposedChart, err = loader.Load(o.chartPath); err != nil {
			return nil, fmt.Errorf("failed to load chart %s: %w", o.chartPath, err)
		}
	}
	shared, err := render.NewCluster(cfg)
	if err != nil {
		return nil, fmt.Errorf("failed to reach the cluster: %w", err)
	}
	base := preview.Request{Local: c, Target: c, TargetConfig: cfg, Cluster: shared, Kinds: kinds, Rollouts: rollouts}
	reports := make([]preview.Report, 0, len(hrs))
	for i := range hrs {
		proposed, err := o.propose(&hrs[i], proposedChart)
		if err != nil {
			return nil, err
		}
		rep, err := previewOne(ctx, base, proposed, proposedChart)
		if err != nil {
			return nil, fmt.Errorf("HelmRelease %s/%s: %w", hrs[i].Namespace, hrs[i].Name, err)
		}
		reports = append(reports, rep)
	}
	return reports, nil
}

// helmReleases reads the HelmReleases to preview.
func (o previewOptions) helmReleases(ctx context.Context, c client.Client) ([]helmv2.HelmRelease, error) {
	if o.name != "" {
		hr := helmv2.HelmRelease{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: o.namespace, Name: o.name}, &hr); err != nil {
			return nil, fmt.Errorf("failed to get HelmRelease %s/%s: %w", o.namespace, o.name, err)
		}
		return []helmv2.HelmRelease{hr}, nil
	}
	sel, err := labels.Parse(o.selector)
	if err != nil {
		return nil, fmt.Errorf("-l %q: %w", o.selector, err)
	}
	list := &helmv2.HelmReleaseList{}
	opts := []client.ListOption{client.MatchingLabelsSelector{Selector: sel}}
	if !o.all {
		opts = append(opts, client.InNamespace(o.namespace))
	}
	if err := c.List(ctx, list, opts...); err != nil {
		return nil, fmt.Errorf("failed to list HelmReleases: %w", err)
	}
	return list.Items, nil
}

// propose applies the change to a copy of the live HelmRelease: the fields
// of --helmrelease that shape the render, then --values and --set.
func (o previewOptions) propose(live *helmv2.HelmRelease, proposedChart *chart.Chart) (*helmv2.HelmRelease, error) {
	hr := live.DeepCopy()
	if o.helmReleaseFile != "" {
		data, err := os.ReadFile(o.helmReleaseFile)
		if err != nil {
			return nil, fmt.Errorf("failed to read --helmrelease: %w", err)
		}
		file := &helmv2.HelmRelease{}
		if err := yaml.UnmarshalStrict(data, file); err != nil {
			return nil, fmt.Errorf("--helmrelease %s is not a HelmRelease: %w", o.helmReleaseFile, err)
		}
		if file.Name != live.Name || (file.Namespace != "" && file.Namespace != live.Namespace) {
			return nil, fmt.Errorf("--helmrelease %s proposes HelmRelease %s/%s, not %s/%s", o.helmReleaseFile, file.Namespace, file.Name, live.Namespace, live.Name)
		}
		if v := chartVersion(file); proposedChart == nil && v != "" && v != chartVersion(live) {
			return nil, fmt.Errorf("--helmrelease changes the chart version from %q to %q: give the new chart with --chart", chartVersion(live), v)
		}
		hr.Spec.Values, hr.Spec.ValuesFrom = file.Spec.Values, file.Spec.ValuesFrom
		hr.Spec.PostRenderers, hr.Spec.PostRenderStrategy = file.Spec.PostRenderers, file.Spec.PostRenderStrategy
		hr.Spec.CommonMetadata, hr.Spec.Upgrade = file.Spec.CommonMetadata, file.Spec.Upgrade
		hr.Spec.ReleaseName, hr.Spec.TargetNamespace, hr.Spec.StorageNamespace = file.Spec.ReleaseName, file.Spec.TargetNamespace, file.Spec.StorageNamespace
		hr.Spec.KubeConfig, hr.Spec.ServiceAccountName = file.Spec.KubeConfig, file.Spec.ServiceAccountName
	}
	if len(o.valuesFiles) == 0 && len(o.sets) == 0 {
		return hr, nil
	}
	values := hr.GetValues()
	if len(o.valuesFiles) > 0 {
		values = map[string]any{}
		for _, f := range o.valuesFiles {
			data, err := os.ReadFile(f)
			if err != nil {
				return nil, fmt.Errorf("failed to read --values: %w", err)
			}
			v := map[string]any{}
			if err := yaml.Unmarshal(data, &v); err != nil {
				return nil, fmt.Errorf("--values %s: %w", f, err)
			}
			values = mergeValues(values, v)
		}
	}
	for _, s := range o.sets {
		if err := strvals.ParseInto(s, values); err != nil {
			return nil, fmt.Errorf("--set %s: %w", s, err)
		}
	}
	raw, err := yaml.Marshal(values)
	if err != nil {
		return nil, err
	}
	js, err := yaml.YAMLToJSON(raw)
	if err != nil {
		return nil, err
	}
	hr.Spec.Values = &apiextensionsv1.JSON{Raw: js}
	return hr, nil
}

func chartVersion(hr *helmv2.HelmRelease) string {
	if hr.Spec.Chart == nil {
		return ""
	}
	return hr.Spec.Chart.Spec.Version
}

// mergeValues merges b over a, maps key by key, as Helm merges -f files.
func mergeValues(a, b map[string]any) map[string]any {
	out := make(map[string]any, len(a))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		if bm, ok := v.(map[string]any); ok {
			if am, ok := out[k].(map[string]any); ok {
				out[k] = mergeValues(am, bm)
				continue
			}
		}
		out[k] = v
	}
	return out
}

// previewOne previews one HelmRelease on its cluster, with the request
// every HelmRelease of the command shares. The preview acts as
// the kubeconfig's identity; a HelmRelease that deploys elsewhere
// (spec.kubeConfig) is not previewed.
func previewOne(ctx context.Context, base preview.Request, hr *helmv2.HelmRelease, proposedChart *chart.Chart) (preview.Report, error) {
	if hr.Spec.KubeConfig != nil {
		return preview.Report{}, errors.New("it deploys to a remote cluster (spec.kubeConfig): previewing a remote target is not supported yet")
	}
	base.HelmRelease, base.Chart, base.Now = hr, proposedChart, time.Now()
	return preview.Run(ctx, base)
}
