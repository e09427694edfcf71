package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	flag "github.com/spf13/pflag"
	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/plan"
)

// The output formats of diff and preview (-o).
const (
	outputText     = "text"
	outputJSON     = "json"
	outputMarkdown = "markdown"
)

// selection is which HelmReleases a command looks at, and how it prints
// them: one HelmRelease by name, or a fleet by -l and -A. diff and preview
// share it.
type selection struct {
	// name is the HELMRELEASE argument, empty for a fleet.
	name     string
	selector string
	all      bool
	output   string
}

// bind registers -l, -A and -o; verb begins their help (Diff, Preview).
func (s *selection) bind(fs *flag.FlagSet, verb string) {
	fs.StringVarP(&s.selector, "selector", "l", "", verb+" every HelmRelease with these labels (in the namespace, or all with -A).")
	fs.BoolVarP(&s.all, "all-namespaces", "A", false, verb+" the HelmReleases of every namespace.")
	fs.StringVarP(&s.output, "output", "o", outputText, "Output format: text, json or markdown.")
}

// args reads the command's arguments: one HelmRelease by name, or none
// with -l or -A; and checks -o.
func (s *selection) args(args []string) error {
	if err := s.checkOutput(); err != nil {
		return err
	}
	switch {
	case len(args) == 1 && !s.fleet():
		s.name = args[0]
	case len(args) == 0 && s.fleet():
	default:
		return errors.New("name one HelmRelease, or select a fleet with -l or -A")
	}
	return nil
}

// checkOutput checks -o.
func (s *selection) checkOutput() error {
	switch s.output {
	case outputText, outputJSON, outputMarkdown:
		return nil
	}
	return fmt.Errorf("-o %q: want text, json or markdown", s.output)
}

// fleet reports whether the HelmReleases are selected by -l or -A, not
// named.
func (s *selection) fleet() bool {
	return s.selector != "" || s.all
}

// helmReleases reads the selected HelmReleases; ns is the namespace of a
// named one, and of a fleet without -A.
func (s *selection) helmReleases(ctx context.Context, c client.Reader, ns string) ([]helmv2.HelmRelease, error) {
	if !s.fleet() {
		hr := helmv2.HelmRelease{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: s.name}, &hr); err != nil {
			return nil, fmt.Errorf("failed to get HelmRelease %s/%s: %w", ns, s.name, err)
		}
		return []helmv2.HelmRelease{hr}, nil
	}
	sel, err := labels.Parse(s.selector)
	if err != nil {
		return nil, fmt.Errorf("-l %q: %w", s.selector, err)
	}
	list := &helmv2.HelmReleaseList{}
	opts := []client.ListOption{client.MatchingLabelsSelector{Selector: sel}}
	if !s.all {
		opts = append(opts, client.InNamespace(ns))
	}
	if err := c.List(ctx, list, opts...); err != nil {
		return nil, fmt.Errorf("failed to list HelmReleases: %w", err)
	}
	return list.Items, nil
}

// fleetFlags say how a command goes over its HelmReleases.
type fleetFlags struct {
	parallel int
	timeout  time.Duration
}

func (f *fleetFlags) bind(fs *flag.FlagSet, verb string, timeout time.Duration) {
	fs.IntVar(&f.parallel, "parallel", 4, verb+" this many HelmReleases of a fleet side by side.")
	fs.DurationVar(&f.timeout, "timeout", timeout, "How long one HelmRelease may take; one that takes longer is an error row of the fleet.")
}

// each runs one over hrs, at most f.parallel at a time, each within
// f.timeout, and returns the results in hrs' order. For a fleet (errRow
// set), a HelmRelease whose run fails becomes errRow's row and the others
// go on; progress goes to progress, which may be nil. For one named
// HelmRelease (errRow nil), its error is returned, naming it. A pass that
// could not look at a release's templates is not an error: its report
// says why.
func each[R any](ctx context.Context, f fleetFlags, hrs []helmv2.HelmRelease, progress *progress,
	one func(context.Context, *helmv2.HelmRelease) (R, error), errRow func(*helmv2.HelmRelease, error) R) ([]R, error) {
	out := make([]R, len(hrs))
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(max(f.parallel, 1))
	for i := range hrs {
		hr := &hrs[i]
		g.Go(func() error {
			rctx, cancel := context.WithTimeout(ctx, f.timeout)
			defer cancel()
			r, err := one(rctx, hr)
			progress.done(hr, err)
			switch {
			case err == nil:
				out[i] = r
			case errRow != nil:
				out[i] = errRow(hr, err)
			default:
				return fmt.Errorf("HelmRelease %s/%s: %w", hr.Namespace, hr.Name, err)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

// passFlags are the controller's settings that the add-on's read-only
// pass follows, which diff and preview take as the controller does.
type passFlags struct {
	kinds    []string
	rollouts string
}

func (f *passFlags) bind(fs *flag.FlagSet) {
	fs.StringSliceVar(&f.kinds, "template-kinds", manifest.DefaultTemplateKinds, "The template kinds, as group/KindPattern globs.")
	fs.StringVar(&f.rollouts, "rollouts", plan.RolloutsDeny.String(), "The controller's --rollouts: the rollout policy of a HelmRelease that sets none (deny or allow).")
}

// parse reads the flags as the controller reads its own.
func (f *passFlags) parse() (*manifest.KindMatcher, plan.RolloutPolicy, error) {
	kinds, err := manifest.ParseKinds(f.kinds)
	if err != nil {
		return nil, "", err
	}
	rollouts, err := plan.ParseRolloutPolicy(f.rollouts)
	if err != nil {
		return nil, "", fmt.Errorf("--rollouts: %w", err)
	}
	return kinds, rollouts, nil
}

// session is what diff and preview read before they look at a release:
// the cluster's client, the selected HelmReleases and the pass's settings.
type session struct {
	// ns is the namespace of -n, else the context's.
	ns       string
	cfg      *rest.Config
	client   client.Client
	hrs      []helmv2.HelmRelease
	kinds    *manifest.KindMatcher
	rollouts plan.RolloutPolicy
}

// open connects to the cluster, reads the pass's flags and selects the
// HelmReleases.
func open(ctx context.Context, cluster *clusterFlags, sel *selection, pass *passFlags) (*session, error) {
	s, err := connect(cluster, pass)
	if err != nil {
		return nil, err
	}
	if s.hrs, err = sel.helmReleases(ctx, s.client, s.ns); err != nil {
		return nil, err
	}
	return s, nil
}

// connect connects to the cluster and reads the pass's flags; it selects
// no HelmRelease.
func connect(cluster *clusterFlags, pass *passFlags) (*session, error) {
	cfg, c, err := cluster.connect()
	if err != nil {
		return nil, err
	}
	ns, err := cluster.namespace()
	if err != nil {
		return nil, err
	}
	kinds, rollouts, err := pass.parse()
	if err != nil {
		return nil, err
	}
	return &session{ns: ns, cfg: cfg, client: c, kinds: kinds, rollouts: rollouts}, nil
}
