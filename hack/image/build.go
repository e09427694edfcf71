package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// OCI annotation and label keys
// (https://github.com/opencontainers/image-spec/blob/main/annotations.md).
const (
	labelTitle    = "org.opencontainers.image.title"
	labelSource   = "org.opencontainers.image.source"
	labelVersion  = "org.opencontainers.image.version"
	labelRevision = "org.opencontainers.image.revision"
	labelLicenses = "org.opencontainers.image.licenses"
	labelCreated  = "org.opencontainers.image.created"
	// refNameAnnotation names the index in the layout's index.json, as a
	// tag: `skopeo copy oci:_artifacts/image/layout:0.1.0 ...` finds it.
	refNameAnnotation = "org.opencontainers.image.ref.name"
)

// requiredLabels are the labels every image carries; check refuses an
// image without one of them.
var requiredLabels = []string{labelTitle, labelSource, labelVersion, labelRevision, labelLicenses, labelCreated}

// buildOptions are what the image is built from. Two builds with the same
// options and binaries give the same digest: nothing else goes in.
type buildOptions struct {
	// binaries are the controller binaries, one per platform, in the
	// index's order.
	binaries []platformBinary
	// epoch is SOURCE_DATE_EPOCH, the commit's time: every timestamp of
	// the image (files, config, history, the created label).
	epoch int64
	// version, revision, source and licenses are the OCI labels' values.
	version, revision, source, licenses string
}

// platformBinary is a binary and the platform it was built for.
type platformBinary struct {
	platform v1.Platform
	path     string
}

// created is the image's one timestamp.
func (o buildOptions) created() time.Time {
	return time.Unix(o.epoch, 0).UTC()
}

// labels are the image config's labels, and the index's annotations.
func (o buildOptions) labels() map[string]string {
	return map[string]string{
		labelTitle:    "template-drift-controller",
		labelSource:   o.source,
		labelVersion:  o.version,
		labelRevision: o.revision,
		labelLicenses: o.licenses,
		labelCreated:  o.created().Format(time.RFC3339),
	}
}

// buildIndex builds one image per binary and the index over them.
func buildIndex(o buildOptions) (v1.ImageIndex, error) {
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, b := range o.binaries {
		img, err := buildImage(o, b)
		if err != nil {
			return nil, fmt.Errorf("failed to build the %s image: %w", b.platform, err)
		}
		platform := b.platform
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &platform}})
	}
	annotated, ok := mutate.Annotations(idx, o.labels()).(v1.ImageIndex)
	if !ok {
		return nil, fmt.Errorf("failed to annotate the index")
	}
	return annotated, nil
}

// buildImage builds the image of one platform: an empty base, one layer
// (rootFS), and a config that runs the binary as nonroot.
func buildImage(o buildOptions, b platformBinary) (v1.Image, error) {
	binary, err := os.ReadFile(b.path)
	if err != nil {
		return nil, fmt.Errorf("failed to read the binary: %w", err)
	}
	entries, err := rootFS(binary)
	if err != nil {
		return nil, err
	}
	raw, err := layerTar(entries, o.created())
	if err != nil {
		return nil, err
	}
	gz, err := gzipped(raw)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(gz)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, fmt.Errorf("failed to make the layer: %w", err)
	}
	created := v1.Time{Time: o.created()}
	base := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err := mutate.Append(base, mutate.Addendum{
		Layer:     layer,
		MediaType: types.OCILayer,
		History:   v1.History{Created: created, CreatedBy: "hack/image: the controller, a CA bundle, passwd and group", Comment: o.revision},
	})
	if err != nil {
		return nil, fmt.Errorf("failed to add the layer: %w", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("failed to read the config: %w", err)
	}
	cf = cf.DeepCopy()
	cf.Created = created
	cf.OS, cf.Architecture, cf.Variant = b.platform.OS, b.platform.Architecture, b.platform.Variant
	cf.Config.User = imageUser
	cf.Config.Entrypoint = []string{binaryPath}
	cf.Config.Labels = o.labels()
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, fmt.Errorf("failed to set the config: %w", err)
	}
	return img, nil
}

// writeLayout writes idx as the only entry of a new OCI layout in dir,
// under refName. It removes dir first: a layout is appended to, and an
// older build's index would stay listed.
func writeLayout(dir string, idx v1.ImageIndex, refName string) error {
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("failed to remove the previous layout: %w", err)
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return fmt.Errorf("failed to create the layout %s: %w", dir, err)
	}
	if err := p.AppendIndex(idx, layout.WithAnnotations(map[string]string{refNameAnnotation: refName})); err != nil {
		return fmt.Errorf("failed to write the index to %s: %w", dir, err)
	}
	return nil
}

// readIndex returns the one index of the layout in dir, as writeLayout
// wrote it.
func readIndex(dir string) (v1.ImageIndex, v1.Descriptor, error) {
	p, err := layout.FromPath(dir)
	if err != nil {
		return nil, v1.Descriptor{}, fmt.Errorf("failed to open the layout %s: %w", dir, err)
	}
	top, err := p.ImageIndex()
	if err != nil {
		return nil, v1.Descriptor{}, fmt.Errorf("failed to read %s/index.json: %w", dir, err)
	}
	m, err := top.IndexManifest()
	if err != nil {
		return nil, v1.Descriptor{}, fmt.Errorf("failed to read %s/index.json: %w", dir, err)
	}
	if len(m.Manifests) != 1 || !m.Manifests[0].MediaType.IsIndex() {
		return nil, v1.Descriptor{}, fmt.Errorf("failed to read %s: want one image index in index.json, got %d entries", dir, len(m.Manifests))
	}
	d := m.Manifests[0]
	idx, err := top.ImageIndex(d.Digest)
	if err != nil {
		return nil, v1.Descriptor{}, fmt.Errorf("failed to read the index %s: %w", d.Digest, err)
	}
	return idx, d, nil
}
