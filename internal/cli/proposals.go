package cli

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/templatedrift/template-drift-controller/internal/preview"
)

// proposals are the documents of --helmrelease (a file, or - for stdin):
// the proposed HelmReleases by namespace/name, and the other objects, of
// which the chart sources a chartRef names (OCIRepository, HelmChart) say
// whether the chart changes.
type proposals struct {
	source       string
	helmReleases map[string]*helmv2.HelmRelease
	others       []*unstructured.Unstructured
}

// readProposals reads every document of path ("-": stdin); a document
// without a namespace is in ns, as kubectl applies it.
func readProposals(path string, stdin io.Reader, ns string) (*proposals, error) {
	data, err := readInput(path, stdin)
	if err != nil {
		return nil, fmt.Errorf("failed to read --helmrelease: %w", err)
	}
	source := path
	if path == "-" {
		source = "(stdin)"
	}
	var objs []*unstructured.Unstructured
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for i := 1; ; i++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		u := &unstructured.Unstructured{}
		if err == nil {
			err = yaml.Unmarshal(doc, &u.Object)
		}
		if err != nil {
			return nil, fmt.Errorf("--helmrelease %s: document %d: %w", source, i, err)
		}
		if len(u.Object) > 0 {
			objs = append(objs, u)
		}
	}
	return newProposals("--helmrelease "+source, objs, ns)
}

// newProposals sorts objs, which source holds (a file, a build), into the
// proposed HelmReleases, decoded strictly, and the other objects; an
// object without a namespace is in ns.
func newProposals(source string, objs []*unstructured.Unstructured, ns string) (*proposals, error) {
	p := &proposals{source: source, helmReleases: map[string]*helmv2.HelmRelease{}}
	for _, u := range objs {
		if u.GetNamespace() == "" {
			u.SetNamespace(ns)
		}
		if u.GetKind() != helmv2.HelmReleaseKind {
			p.others = append(p.others, u)
			continue
		}
		data, err := u.MarshalJSON()
		if err != nil {
			return nil, err
		}
		hr := &helmv2.HelmRelease{}
		if err := yaml.UnmarshalStrict(data, hr); err != nil {
			return nil, fmt.Errorf("%s: HelmRelease %s/%s: %w", source, u.GetNamespace(), u.GetName(), err)
		}
		p.helmReleases[hr.Namespace+"/"+hr.Name] = hr
	}
	if len(p.helmReleases) == 0 {
		return nil, fmt.Errorf("%s holds no HelmRelease", source)
	}
	return p, nil
}

// of is the proposed document of a live HelmRelease, or nil.
func (p *proposals) of(live *helmv2.HelmRelease) *helmv2.HelmRelease {
	if p == nil {
		return nil
	}
	return p.helmReleases[live.Namespace+"/"+live.Name]
}

// readInput reads a file, or stdin for "-".
func readInput(path string, stdin io.Reader) ([]byte, error) {
	if path == "-" {
		return io.ReadAll(stdin)
	}
	return os.ReadFile(path)
}

// check refuses proposals the selection cannot preview: a named
// HelmRelease they do not propose, or a proposed HelmRelease that the
// cluster does not have among those selected (a new one).
func (p *proposals) check(hrs []helmv2.HelmRelease, named bool) error {
	selected := map[string]bool{}
	for _, hr := range hrs {
		selected[hr.Namespace+"/"+hr.Name] = true
		if named && p.helmReleases[hr.Namespace+"/"+hr.Name] == nil {
			return fmt.Errorf("%s proposes no HelmRelease %s/%s", p.source, hr.Namespace, hr.Name)
		}
	}
	var unknown []string
	for key := range p.helmReleases {
		if !selected[key] && !named {
			unknown = append(unknown, key)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return fmt.Errorf("%s proposes HelmReleases that are not on the cluster or not selected: %s "+
			"(preview a new HelmRelease from --path or --kustomization)", p.source, strings.Join(unknown, ", "))
	}
	return nil
}

// needsChart refuses a proposed HelmRelease that takes another chart when
// no --chart gives it: another spec.chart or chartRef
// (preview.ChartChange), or a chart source its chartRef names whose
// proposed spec chooses another chart (preview.SourceChange). The stored
// release keeps only the chart it was installed with. A HelmRelease that
// names no chart keeps the live one's.
func (p *proposals) needsChart(ctx context.Context, c client.Reader, live, file *helmv2.HelmRelease, proposedChart *chart.Chart) error {
	if proposedChart != nil {
		return nil
	}
	change := ""
	if file.Spec.Chart != nil || file.Spec.ChartRef != nil {
		change = preview.ChartChange(live, file)
	}
	if change == "" {
		var err error
		if change, err = p.sourceChange(ctx, c, file, live); err != nil {
			return err
		}
	}
	if change == "" {
		return nil
	}
	return fmt.Errorf("%s changes the chart of HelmRelease %s/%s %s: the stored release keeps only its own chart, "+
		"so pass the new one with --chart (a folder or .tgz, e.g. from `helm pull oci://REGISTRY/CHART --version X` "+
		"or `flux pull artifact`)", p.source, live.Namespace, live.Name, change)
}

// sourceChange compares the chart source that the proposed HelmRelease's
// chartRef (else the live one's) names, when the proposals hold it, with
// the cluster's.
func (p *proposals) sourceChange(ctx context.Context, c client.Reader, hrs ...*helmv2.HelmRelease) (string, error) {
	for _, hr := range hrs {
		ref := hr.Spec.ChartRef
		if ref == nil {
			continue
		}
		ns := ref.Namespace
		if ns == "" {
			ns = hr.Namespace
		}
		for _, o := range p.others {
			if o.GetKind() != ref.Kind || o.GetName() != ref.Name || o.GetNamespace() != ns {
				continue
			}
			live := &unstructured.Unstructured{}
			live.SetGroupVersionKind(o.GroupVersionKind())
			err := c.Get(ctx, client.ObjectKeyFromObject(o), live)
			switch {
			case apierrors.IsNotFound(err):
				live = nil
			case err != nil:
				return "", fmt.Errorf("failed to read %s %s/%s: %w", o.GetKind(), ns, o.GetName(), err)
			}
			return preview.SourceChange(live, o), nil
		}
		return "", nil
	}
	return "", nil
}
