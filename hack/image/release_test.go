package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

// readTar lists a tar stream's headers.
func readTar(t *testing.T, data []byte, gzipped bool) []*tar.Header {
	t.Helper()
	var r io.Reader = bytes.NewReader(data)
	if gzipped {
		zr, err := gzip.NewReader(r)
		if err != nil {
			t.Fatal(err)
		}
		r = zr
	}
	var out []*tar.Header
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, h)
	}
}

// TestArchiveIsReproducible writes a CLI archive twice from files with
// different modification times: the same bytes, the files in the given
// order with their modes, owned by 0, at the epoch, and the plugin link.
func TestArchiveIsReproducible(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	bin, doc := filepath.Join(dir, "templatedrift"), filepath.Join(dir, "README.md")
	g.Expect(os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755)).To(Succeed())
	g.Expect(os.WriteFile(doc, []byte("# doc\n"), 0o600)).To(Succeed())
	o := archiveOptions{epoch: 1780000000, gzip: true, files: []string{"templatedrift=" + bin, "README.md=" + doc},
		links: []string{"kubectl-templatedrift=templatedrift"}}
	o.out = filepath.Join(dir, "a.tar.gz")
	g.Expect(writeArchive(o)).To(Succeed())
	g.Expect(os.Chtimes(bin, time.Now(), time.Now().Add(time.Hour))).To(Succeed())
	o.out = filepath.Join(dir, "b.tar.gz")
	g.Expect(writeArchive(o)).To(Succeed())
	a, _ := os.ReadFile(filepath.Join(dir, "a.tar.gz"))
	b, _ := os.ReadFile(filepath.Join(dir, "b.tar.gz"))
	g.Expect(a).To(Equal(b))

	hs := readTar(t, a, true)
	g.Expect(hs).To(HaveLen(3))
	g.Expect([]string{hs[0].Name, hs[1].Name, hs[2].Name}).To(Equal([]string{"templatedrift", "README.md", "kubectl-templatedrift"}))
	g.Expect(hs[0].Mode).To(BeEquivalentTo(0o755))
	g.Expect(hs[1].Mode).To(BeEquivalentTo(0o644))
	g.Expect(hs[2].Typeflag).To(BeEquivalentTo(tar.TypeSymlink))
	g.Expect(hs[2].Linkname).To(Equal("templatedrift"))
	for _, h := range hs {
		g.Expect(h.ModTime.Unix()).To(BeEquivalentTo(1780000000))
		g.Expect(h.Uid).To(BeZero())
	}
}

// TestArchiveTree archives a layout's tree: parents before children, in
// name order.
func TestArchiveTree(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	g.Expect(os.MkdirAll(filepath.Join(dir, "tree", "blobs", "sha256"), 0o755)).To(Succeed())
	g.Expect(os.WriteFile(filepath.Join(dir, "tree", "index.json"), []byte("{}"), 0o644)).To(Succeed())
	g.Expect(os.WriteFile(filepath.Join(dir, "tree", "blobs", "sha256", "ab"), []byte("x"), 0o644)).To(Succeed())
	out := filepath.Join(dir, "t.tar")
	g.Expect(writeArchive(archiveOptions{out: out, dir: filepath.Join(dir, "tree")})).To(Succeed())
	data, _ := os.ReadFile(out)
	var names []string
	for _, h := range readTar(t, data, false) {
		names = append(names, h.Name)
	}
	g.Expect(names).To(Equal([]string{"blobs/", "blobs/sha256/", "blobs/sha256/ab", "index.json"}))
}

// TestSums lists every file but SHA256SUMS itself, in the format
// `sha256sum -c` reads.
func TestSums(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	g.Expect(os.WriteFile(filepath.Join(dir, "b"), []byte("b"), 0o644)).To(Succeed())
	g.Expect(os.WriteFile(filepath.Join(dir, "a"), []byte(""), 0o644)).To(Succeed())
	out := filepath.Join(dir, "SHA256SUMS")
	g.Expect(os.WriteFile(out, []byte("stale"), 0o644)).To(Succeed())
	g.Expect(writeSums(dir, out)).To(Succeed())
	data, _ := os.ReadFile(out)
	g.Expect(string(data)).To(Equal(
		"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  a\n" +
			"3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d  b\n"))
}

// TestImageSBOM describes a built image from its binary's SBOM: the image
// as an OCI package URL with the index digest, the binary and the CA
// bundle's module as its dependencies, the binary's modules kept.
func TestImageSBOM(t *testing.T) {
	g := NewWithT(t)
	layout := buildLayout(t, testOptions(t))
	_, desc, err := readIndex(layout)
	g.Expect(err).NotTo(HaveOccurred())
	dir := t.TempDir()
	binSBOM := filepath.Join(dir, "bin.cdx.json")
	g.Expect(os.WriteFile(binSBOM, []byte(`{"bomFormat":"CycloneDX","specVersion":"1.6","version":1,
		"metadata":{"component":{"bom-ref":"app","type":"application","name":"github.com/templatedrift/template-drift-controller","version":"v1.2.3"}},
		"components":[{"bom-ref":"mod","type":"library","name":"k8s.io/api","version":"v0.37.2"}],
		"dependencies":[{"ref":"app","dependsOn":["mod"]}]}`), 0o644)).To(Succeed())
	o := sbomOptions{layout: layout, repository: "ghcr.io/templatedrift/template-drift-controller", binarySBOM: binSBOM,
		epoch: 1780000000, licenses: "Apache-2.0", out: filepath.Join(dir, "image.cdx.json")}
	g.Expect(writeImageSBOM(o)).To(Succeed())
	data, err := os.ReadFile(o.out)
	g.Expect(err).NotTo(HaveOccurred())
	var doc struct {
		Metadata struct {
			Timestamp string
			Component struct {
				Type, Name, Version, Purl string
			}
		}
		Components   []struct{ Name string }
		Dependencies []struct {
			Ref       string
			DependsOn []string
		}
	}
	g.Expect(json.Unmarshal(data, &doc)).To(Succeed())
	g.Expect(doc.Metadata.Timestamp).To(Equal("2026-05-28T20:26:40Z"))
	g.Expect(doc.Metadata.Component.Type).To(Equal("container"))
	g.Expect(doc.Metadata.Component.Purl).To(HavePrefix("pkg:oci/template-drift-controller@sha256%3A" + desc.Digest.Hex))
	g.Expect(doc.Metadata.Component.Version).To(Equal("1.2.3"))
	var names []string
	for _, c := range doc.Components {
		names = append(names, c.Name)
	}
	g.Expect(names).To(ConsistOf("github.com/templatedrift/template-drift-controller", caBundleModule, "k8s.io/api"))
	g.Expect(doc.Dependencies[0].DependsOn).To(HaveLen(2))
	g.Expect(strings.Contains(string(data), "serialNumber")).To(BeFalse(), "no serial number: the same bytes every build")
}
