package main

import (
	"fmt"
	"net/url"
	"os"
	"runtime/debug"
	"strings"
	"time"

	cdx "github.com/CycloneDX/cyclonedx-go"
)

// caBundleModule is the Go module the image's CA bundle comes from.
const caBundleModule = "golang.org/x/crypto/x509roots/fallback"

// sbomOptions says what the image's SBOM describes.
type sbomOptions struct {
	layout, repository, binarySBOM, out string
	epoch                               int64
	licenses                            string
}

// writeImageSBOM writes a CycloneDX SBOM of the image in o.layout: the
// image (its index digest, as an OCI package URL) made of the controller
// binary, whose modules the binary's own SBOM (cyclonedx-gomod's, of the
// same build) lists, and of the CA bundle, whose module is this tool's.
// The time is the epoch and there is no serial number, so two builds of
// one commit give the same bytes.
func writeImageSBOM(o sbomOptions) error {
	_, desc, err := readIndex(o.layout)
	if err != nil {
		return err
	}
	f, err := os.Open(o.binarySBOM)
	if err != nil {
		return err
	}
	defer f.Close()
	bin := cdx.NewBOM()
	if err := cdx.NewBOMDecoder(f, cdx.BOMFileFormatJSON).Decode(bin); err != nil {
		return fmt.Errorf("failed to read the binary's SBOM %s: %w", o.binarySBOM, err)
	}
	if bin.Metadata == nil || bin.Metadata.Component == nil {
		return fmt.Errorf("the binary's SBOM %s names no component", o.binarySBOM)
	}
	ca, err := caBundleComponent()
	if err != nil {
		return err
	}
	version := desc.Annotations[refNameAnnotation]
	image := imageComponent(o, desc.Digest.Hex, version)
	app := *bin.Metadata.Component
	components := append([]cdx.Component{app, ca}, deref(bin.Components)...)
	deps := append([]cdx.Dependency{{Ref: image.BOMRef, Dependencies: &[]string{app.BOMRef, ca.BOMRef}}},
		deref(bin.Dependencies)...)
	doc := cdx.NewBOM()
	doc.Metadata = &cdx.Metadata{
		Timestamp: time.Unix(o.epoch, 0).UTC().Format(time.RFC3339),
		Tools:     bin.Metadata.Tools,
		Component: &image,
	}
	doc.Components, doc.Dependencies = &components, &deps
	out, err := os.Create(o.out)
	if err != nil {
		return err
	}
	enc := cdx.NewBOMEncoder(out, cdx.BOMFileFormatJSON).SetPretty(true)
	if err := enc.EncodeVersion(doc, cdx.SpecVersion1_6); err != nil {
		out.Close()
		return fmt.Errorf("failed to write %s: %w", o.out, err)
	}
	return out.Close()
}

// imageComponent is the image: its package URL names the index digest, the
// repository and the tag (purl's oci type).
func imageComponent(o sbomOptions, digestHex, version string) cdx.Component {
	name := o.repository[strings.LastIndex(o.repository, "/")+1:]
	q := url.Values{"repository_url": {o.repository}, "tag": {version}}
	purl := fmt.Sprintf("pkg:oci/%s@sha256%%3A%s?%s", name, digestHex, q.Encode())
	c := cdx.Component{
		BOMRef: purl, Type: cdx.ComponentTypeContainer, Name: o.repository, Version: version, PackageURL: purl,
		Hashes: &[]cdx.Hash{{Algorithm: cdx.HashAlgoSHA256, Value: digestHex}},
	}
	if o.licenses != "" {
		c.Licenses = &cdx.Licenses{{Expression: o.licenses}}
	}
	return c
}

// caBundleComponent is the module this tool takes the CA bundle from, at
// the version it was built with.
func caBundleComponent() (cdx.Component, error) {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return cdx.Component{}, fmt.Errorf("the image tool has no build information")
	}
	for _, m := range info.Deps {
		if m.Path == caBundleModule {
			purl := fmt.Sprintf("pkg:golang/%s@%s?type=module", m.Path, m.Version)
			return cdx.Component{BOMRef: purl, Type: cdx.ComponentTypeData, Name: m.Path, Version: m.Version,
				PackageURL: purl, Description: "The CA bundle at " + caBundlePath}, nil
		}
	}
	return cdx.Component{}, fmt.Errorf("the image tool was not built with %s", caBundleModule)
}

// deref is *p, or nothing.
func deref[T any](p *[]T) []T {
	if p == nil {
		return nil
	}
	return *p
}
