package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/spf13/cobra"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/strvals"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/templatedrift/template-drift-controller/internal/preview"
	"github.com/templatedrift/template-drift-controller/internal/render"
)

// previewOptions are the preview command's flags and arguments: the
// HelmReleases, and the change proposed for them.
type previewOptions struct {
	cluster                    *clusterFlags
	sel                        selection
	pass                       passFlags
	valuesFiles, sets          []string
	helmReleaseFile, chartPath string
	failOn                     string
	fleet                      fleetFlags
	repo                       repository
	// stdin is what --helmrelease - reads.
	stdin io.Reader
}

// newPreview is the preview command; name is the command's, for its
// examples.
func newPreview(name string, cluster *clusterFlags, code *int) *cobra.Command {
	o := &previewOptions{cluster: cluster}
	cmd := &cobra.Command{
		Use:   "preview [-n NAMESPACE] (HELMRELEASE | -l SELECTOR | -A | --kustomization NAME | --path DIR) [--values FILE]... [--set KEY=VALUE]... [--helmrelease FILE] [--chart PATH]",
		Short: "Predict what the Helm upgrade of a change would do, before it merges",
		Long: `Predicts what the Helm upgrade of a HelmRelease would do, before the change
merges: it renders the chart as helm-controller does, with the change, then
asks the API server, through dry-runs only, what each object would become.
It says which objects the server refuses (the upgrade fails, with the
webhook's message), which MachineDeployments and control planes roll and how
many Machines, and which templates change in place. It writes nothing: every
request with a write verb carries dryRun=All, so it needs the write verbs in
RBAC.

With -l or -A it previews every HelmRelease selected, --parallel at a
time; one that fails is an error row and the others go on.

With --kustomization (or --path), run from a checkout of the fleet
repository, the change is the folder built as the Flux Kustomization
builds it: its patches and postBuild substitutions applied, the ConfigMaps
and Secrets it generates read for valuesFrom. Every HelmRelease of the
build is previewed (or the one named); one the cluster does not have is
previewed as an install, of --chart.

Exit code: 0 when nothing reaches --fail-on (default failure), 1 when
something does or Helm is acting on a release (nothing can be predicted),
2 on an error, or when a HelmRelease of a fleet could not be previewed.`,
		Example: fmt.Sprintf(`  %[1]s preview -n fleet --set kubeletArgs.max-pods=200 cluster
  %[1]s preview -n fleet --helmrelease hr.yaml --chart ./charts/cluster -o markdown cluster
  %[1]s preview -A -l env=production --values values.yaml --fail-on rollout
  %[1]s preview --kustomization flux-system/clusters -o markdown`, name),
		Args:              func(_ *cobra.Command, args []string) error { return o.args(args) },
		ValidArgsFunction: cluster.completeHelmReleases,
		Run: func(cmd *cobra.Command, _ []string) {
			o.stdin = cmd.InOrStdin()
			*code = o.run(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	fs := cmd.Flags()
	o.sel.bind(fs, "Preview")
	o.pass.bind(fs)
	fs.StringArrayVar(&o.valuesFiles, "values", nil, "A values file that replaces spec.values (repeatable: merged in order).")
	fs.StringArrayVar(&o.sets, "set", nil, "KEY=VALUE set in spec.values after --values (repeatable, Helm's --set syntax).")
	fs.StringVar(&o.helmReleaseFile, "helmrelease", "", "The proposed HelmReleases, a YAML file of one or more documents (- reads stdin): their values, valuesFrom, postRenderers, commonMetadata, releaseName, targetNamespace, storageNamespace and upgrade settings are used; an OCIRepository or HelmChart among them that a chartRef names says whether the chart changes.")
	fs.StringVar(&o.chartPath, "chart", "", "The proposed chart (a folder or .tgz); default: the chart the stored release keeps.")
	fs.StringVar(&o.failOn, "fail-on", string(preview.FailOnFailure), "Exit 1 when this much or more is predicted: failure, rollout or change.")
	o.repo.bind(fs)
	o.fleet.bind(fs, "Preview", 5*time.Minute)
	return cmd
}

// args checks the arguments: one HelmRelease by name, or a fleet by
// selector or -A, and a change that fits it.
func (o *previewOptions) args(args []string) error {
	if _, err := preview.ParseFailOn(o.failOn); err != nil {
		return err
	}
	if !o.repo.set() {
		return o.sel.args(args)
	}
	switch {
	case o.helmReleaseFile != "":
		return errors.New("--helmrelease and --path or --kustomization are two ways to give the change: use one")
	case o.sel.fleet():
		return errors.New("--path and --kustomization preview the HelmReleases the build holds: -l and -A do not apply")
	case len(args) > 1:
		return errors.New("name at most one HelmRelease of the build")
	}
	if len(args) == 1 {
		o.sel.name = args[0]
	}
	return o.sel.checkOutput()
}

// isFleet reports whether the command goes over several HelmReleases, of
// which one that fails is an error row: a selection, or a build.
func (o *previewOptions) isFleet() bool {
	return o.sel.fleet() || (o.repo.set() && o.sel.name == "")
}

// run previews the selected HelmReleases and prints them; it returns the
// exit code.
func (o *previewOptions) run(ctx context.Context, stdout, stderr io.Writer) int {
	reports, err := o.previewHelmReleases(ctx, stderr)
	if err == nil {
		switch o.sel.output {
		case outputJSON:
			err = preview.WriteJSON(stdout, reports)
		case outputMarkdown:
			err = preview.WriteMarkdown(stdout, reports)
		default:
			err = preview.WriteText(stdout, reports)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return preview.ExitError
	}
	level, _ := preview.ParseFailOn(o.failOn) // checked by args
	return preview.ExitCode(reports, level)
}

// previewHelmReleases previews each selected HelmRelease with the change,
// on one client and one render cluster they share.
func (o *previewOptions) previewHelmReleases(ctx context.Context, stderr io.Writer) ([]preview.Report, error) {
	s, props, isNew, err := o.change(ctx)
	if err != nil {
		return nil, err
	}
	var proposedChart *chart.Chart
	if o.chartPath != "" {
		if proposedChart, err = loader.Load(o.chartPath); err != nil {
			return nil, fmt.Errorf("failed to load chart %s: %w", o.chartPath, err)
		}
	}
	shared, err := render.NewCluster(s.cfg)
	if err != nil {
		return nil, fmt.Errorf("failed to reach the cluster: %w", err)
	}
	local := s.client
	if props != nil {
		local = withProposedValues(s.client, props.others)
	}
	base := preview.Request{Local: local, Target: s.client, TargetConfig: s.cfg, Cluster: shared, Kinds: s.kinds, Rollouts: s.rollouts}
	var errRow func(*helmv2.HelmRelease, error) preview.Report
	if o.isFleet() {
		errRow = func(hr *helmv2.HelmRelease, err error) preview.Report {
			return preview.Report{HelmRelease: hr.Namespace + "/" + hr.Name, New: isNew[hr.Namespace+"/"+hr.Name], Objects: []preview.Object{}, Error: err.Error()}
		}
	}
	progress := newProgress(stderr, "preview", len(s.hrs), o.isFleet())
	return each(ctx, o.fleet, s.hrs, progress, func(ctx context.Context, hr *helmv2.HelmRelease) (preview.Report, error) {
		req := base
		req.New = isNew[hr.Namespace+"/"+hr.Name]
		proposed := hr
		if !req.New {
			var err error
			if proposed, err = o.propose(ctx, s.client, hr, proposedChart, props); err != nil {
				return preview.Report{}, err
			}
		}
		return previewOne(ctx, req, proposed, proposedChart)
	}, errRow)
}

// change connects to the cluster and reads the change: the HelmReleases
// selected and the proposals of --helmrelease, or the HelmReleases and
// proposals of the repository's build, of which isNew names those the
// cluster does not have yet.
func (o *previewOptions) change(ctx context.Context) (s *session, props *proposals, isNew map[string]bool, err error) {
	if !o.repo.set() {
		if s, err = open(ctx, o.cluster, &o.sel, &o.pass); err != nil {
			return nil, nil, nil, err
		}
		if o.helmReleaseFile != "" {
			if props, err = readProposals(o.helmReleaseFile, o.stdin, s.ns); err != nil {
				return nil, nil, nil, err
			}
			if err := props.check(s.hrs, !o.sel.fleet()); err != nil {
				return nil, nil, nil, err
			}
		}
		return s, props, nil, nil
	}
	if s, err = connect(o.cluster, &o.pass); err != nil {
		return nil, nil, nil, err
	}
	if props, err = o.repo.proposals(ctx, s.client, s.ns); err != nil {
		return nil, nil, nil, err
	}
	if s.hrs, isNew, err = props.liveHelmReleases(ctx, s.client, o.sel.name); err != nil {
		return nil, nil, nil, err
	}
	return s, props, isNew, nil
}

// propose applies the change to a copy of the live HelmRelease: the fields
// of its proposed document (props, from --helmrelease) that shape the
// render, then --values and --set.
func (o *previewOptions) propose(ctx context.Context, c client.Reader, live *helmv2.HelmRelease, proposedChart *chart.Chart,
	props *proposals) (*helmv2.HelmRelease, error) {
	hr := live.DeepCopy()
	if file := props.of(live); file != nil {
		if err := props.needsChart(ctx, c, live, file, proposedChart); err != nil {
			return nil, err
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
	if values == nil {
		// No spec.values (values only from valuesFrom, or the chart's
		// defaults): strvals cannot set keys in a nil map.
		values = map[string]any{}
	}
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
