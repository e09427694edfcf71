package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/spf13/cobra"

	"github.com/templatedrift/template-drift-controller/internal/diffreport"
	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/pipeline"
	"github.com/templatedrift/template-drift-controller/internal/release"
	"github.com/templatedrift/template-drift-controller/internal/target"
)

// diffOptions are the diff command's flags and arguments.
type diffOptions struct {
	cluster   *clusterFlags
	sel       selection
	pass      passFlags
	defaultSA string
	fleet     fleetFlags
}

// newDiff is the diff command; name is the command's, for its examples.
func newDiff(name string, cluster *clusterFlags, code *int) *cobra.Command {
	o := &diffOptions{cluster: cluster}
	cmd := &cobra.Command{
		Use:   "diff [-n NAMESPACE] (HELMRELEASE | -l SELECTOR | -A)",
		Short: "Show the drift of a HelmRelease's templates, and what the add-on would do",
		Long: `Compares the templates of a HelmRelease's stored Helm release with the live
ones, through the same pipeline as the controller, and writes nothing. It
prints each drifted template, its JSON paths with before → after values, and
what the HelmRelease's strategy (auto unless templatedrift.io/strategy says
otherwise) would do. With -l or -A it diffs every HelmRelease selected,
--parallel at a time; one that fails is an error row and the others go on.

Exit code: 0 when every HelmRelease is in sync, 1 when drift is found, 2 on
an error or when a pass could not look at a release's templates.`,
		Example: fmt.Sprintf(`  %[1]s diff -n fleet cluster
  %[1]s diff -A -l env=production -o markdown`, name),
		Args:              func(_ *cobra.Command, args []string) error { return o.sel.args(args) },
		ValidArgsFunction: cluster.completeHelmReleases,
		Run: func(cmd *cobra.Command, _ []string) {
			*code = o.run(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	fs := cmd.Flags()
	o.sel.bind(fs, "Diff")
	o.pass.bind(fs)
	fs.StringVar(&o.defaultSA, "default-service-account", "", "The service account impersonated for HelmReleases that name none.")
	o.fleet.bind(fs, "Diff", time.Minute)
	return cmd
}

// run diffs the selected HelmReleases and prints them; it returns the exit
// code.
func (o *diffOptions) run(ctx context.Context, stdout, stderr io.Writer) int {
	reports, err := o.diff(ctx, stderr)
	if err == nil {
		err = o.write(stdout, reports)
	}
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return diffreport.ExitError
	}
	return diffreport.Fleet(reports).ExitCode()
}

// diff runs a read-only pass over each selected HelmRelease, on its target
// as the controller would reach it.
func (o *diffOptions) diff(ctx context.Context, stderr io.Writer) ([]diffreport.DiffReport, error) {
	s, err := open(ctx, o.cluster, &o.sel, &o.pass)
	if err != nil {
		return nil, err
	}
	engine := &pipeline.Engine{Kinds: s.kinds, Releases: release.NewReader(manifest.DefaultMaxManifestBytes),
		Targets:          &target.Targets{Local: s.cfg, Reader: s.client, Scheme: s.client.Scheme(), DefaultServiceAccount: o.defaultSA},
		MaxManifestBytes: manifest.DefaultMaxManifestBytes, Rollouts: s.rollouts}
	var errRow func(*helmv2.HelmRelease, error) diffreport.DiffReport
	if o.sel.fleet() {
		errRow = func(hr *helmv2.HelmRelease, err error) diffreport.DiffReport {
			return diffreport.DiffReport{HelmRelease: hr.Namespace + "/" + hr.Name, Reason: diffreport.ErrorReason,
				Message: err.Error(), Templates: []diffreport.DiffTemplate{}}
		}
	}
	progress := newProgress(stderr, "diff", len(s.hrs), o.sel.fleet())
	return each(ctx, o.fleet, s.hrs, progress, func(ctx context.Context, hr *helmv2.HelmRelease) (diffreport.DiffReport, error) {
		res, err := engine.Run(ctx, pipeline.Request{HelmRelease: hr, ReadOnly: true})
		if err != nil {
			return diffreport.DiffReport{}, err
		}
		return diffreport.NewDiffReport(hr.Namespace+"/"+hr.Name, res), nil
	}, errRow)
}

// write prints the reports: a named HelmRelease's as one report, a fleet's
// with its total; markdown always as a fleet's.
func (o *diffOptions) write(w io.Writer, reports []diffreport.DiffReport) error {
	fleet := diffreport.Fleet(reports)
	switch {
	case o.sel.output == outputMarkdown:
		return fleet.WriteMarkdown(w)
	case o.sel.fleet() && o.sel.output == outputJSON:
		return fleet.WriteJSON(w)
	case o.sel.fleet():
		return fleet.WriteText(w)
	case o.sel.output == outputJSON:
		return reports[0].WriteJSON(w)
	}
	return reports[0].WriteText(w)
}
