package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/kustomize"
	"helm.sh/helm/v4/pkg/postrenderer"
	"sigs.k8s.io/kustomize/api/builtins" //nolint:staticcheck // helm-controller v1.6 post-renders with these transformers; the render must match it
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/provider"
	"sigs.k8s.io/kustomize/api/resmap"
	kustypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// PostRenderer is the chain of post-renderers helm-controller v1.6 runs on
// a HelmRelease's rendered chart, in its order: each spec.postRenderers
// entry's kustomize patches and images, then spec.commonMetadata's labels
// and annotations, then the origin labels helm.toolkit.fluxcd.io/name and
// /namespace that helm-controller puts on every object. helm-controller
// keeps these in an internal package, so they are written again here with
// the same kustomize calls; the preview's test of a HelmRelease as it is
// (the render equals the manifest helm-controller stored) is what shows
// they agree.
func PostRenderer(hr *helmv2.HelmRelease) postrenderer.PostRenderer {
	var chain chained
	for _, r := range hr.Spec.PostRenderers {
		// An entry without kustomize (the only kind there is) does
		// nothing in helm-controller either.
		if r.Kustomize != nil {
			chain = append(chain, kustomizeRenderer{patches: r.Kustomize.Patches, images: r.Kustomize.Images})
		}
	}
	if cm := hr.Spec.CommonMetadata; cm != nil && (cm.Labels != nil || cm.Annotations != nil) {
		chain = append(chain, metadataRenderer{labels: cm.Labels, annotations: cm.Annotations})
	}
	chain = append(chain, metadataRenderer{labels: map[string]string{
		helmv2.GroupVersion.Group + "/name":      hr.Name,
		helmv2.GroupVersion.Group + "/namespace": hr.Namespace,
	}})
	return chain
}

// chained runs post-renderers one after the other.
type chained []postrenderer.PostRenderer

func (c chained) Run(in *bytes.Buffer) (*bytes.Buffer, error) {
	out := in
	for _, r := range c {
		var err error
		if out, err = r.Run(out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// kustomizeRenderer applies one kustomize post-renderer: the rendered chart
// is the only resource of an in-memory kustomization with the patches and
// image overrides, built with plugins disabled.
type kustomizeRenderer struct {
	patches []kustomize.Patch
	images  []kustomize.Image
}

// krustyMu serialises kustomize builds: krusty is not safe for concurrent
// use, as helm-controller notes too.
var krustyMu sync.Mutex

func (k kustomizeRenderer) Run(in *bytes.Buffer) (*bytes.Buffer, error) {
	const input = "helm-output.yaml"
	cfg := kustypes.Kustomization{Resources: []string{input}}
	cfg.APIVersion, cfg.Kind = kustypes.KustomizationVersion, kustypes.KustomizationKind
	for _, img := range k.images {
		cfg.Images = append(cfg.Images, kustypes.Image{Name: img.Name, NewName: img.NewName, NewTag: img.NewTag, Digest: img.Digest})
	}
	for _, p := range k.patches {
		cfg.Patches = append(cfg.Patches, kustypes.Patch{Patch: p.Patch, Target: selector(p.Target)})
	}
	kustomization, err := json.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("failed to write the post-render kustomization: %w", err)
	}
	fs := filesys.MakeFsInMemory()
	if err := fs.WriteFile(input, in.Bytes()); err != nil {
		return nil, fmt.Errorf("failed to stage the rendered chart for kustomize: %w", err)
	}
	if err := fs.WriteFile("kustomization.yaml", kustomization); err != nil {
		return nil, fmt.Errorf("failed to stage the post-render kustomization: %w", err)
	}
	krustyMu.Lock()
	defer krustyMu.Unlock()
	m, err := krusty.MakeKustomizer(&krusty.Options{
		LoadRestrictions: kustypes.LoadRestrictionsNone,
		PluginConfig:     kustypes.DisabledPluginConfig(),
	}).Run(fs, ".")
	if err != nil {
		return nil, fmt.Errorf("kustomize post-renderer: %w", err)
	}
	return asYAML(m)
}

func selector(s *kustomize.Selector) *kustypes.Selector {
	if s == nil {
		return nil
	}
	out := &kustypes.Selector{LabelSelector: s.LabelSelector, AnnotationSelector: s.AnnotationSelector}
	out.Name, out.Namespace = s.Name, s.Namespace
	out.Group, out.Version, out.Kind = s.Group, s.Version, s.Kind
	return out
}

// metadataRenderer sets labels and annotations on every object, creating
// metadata.labels and metadata.annotations where missing, with kustomize's
// label and annotation transformers (which touch metadata only, as
// helm-controller configures them).
type metadataRenderer struct {
	labels, annotations map[string]string
}

func (r metadataRenderer) Run(in *bytes.Buffer) (*bytes.Buffer, error) {
	m, err := resmap.NewFactory(provider.NewDefaultDepProvider().GetResourceFactory()).NewResMapFromBytes(in.Bytes())
	if err != nil {
		return nil, fmt.Errorf("failed to parse the rendered chart for its metadata: %w", err)
	}
	if r.labels != nil {
		t := &builtins.LabelTransformerPlugin{Labels: r.labels,
			FieldSpecs: []kustypes.FieldSpec{{Path: "metadata/labels", CreateIfNotPresent: true}}}
		if err := t.Transform(m); err != nil {
			return nil, fmt.Errorf("failed to set the labels: %w", err)
		}
	}
	if r.annotations != nil {
		t := &builtins.AnnotationsTransformerPlugin{Annotations: r.annotations,
			FieldSpecs: []kustypes.FieldSpec{{Path: "metadata/annotations", CreateIfNotPresent: true}}}
		if err := t.Transform(m); err != nil {
			return nil, fmt.Errorf("failed to set the annotations: %w", err)
		}
	}
	return asYAML(m)
}

func asYAML(m resmap.ResMap) (*bytes.Buffer, error) {
	out, err := m.AsYaml()
	if err != nil {
		return nil, fmt.Errorf("failed to write the post-rendered objects: %w", err)
	}
	return bytes.NewBuffer(out), nil
}
