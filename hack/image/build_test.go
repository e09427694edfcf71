package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	. "github.com/onsi/gomega"
)

// hostPlatform is the platform whose binary check runs.
var hostPlatform = runtime.GOOS + "/" + runtime.GOARCH

// otherPlatform is a second platform for the index, never the host's.
func otherPlatform() string {
	if runtime.GOARCH == "arm64" {
		return "linux/amd64"
	}
	return "linux/arm64"
}

// fakeBinary writes a script that prints --version as the controller does,
// with the given version, commit and date, and returns its path.
func fakeBinary(t *testing.T, version, commit, date string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "template-drift-controller")
	script := fmt.Sprintf("#!/bin/sh\nprintf 'version: %s\\ncommit: %s\\ndate: %s\\ngo: go1 linux/amd64\\n'\n", version, commit, date)
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// testOptions are build options over the same fake binary for the host's
// platform and another one; epoch 1780000000 is 2026-05-28T20:26:40Z.
func testOptions(t *testing.T) buildOptions {
	t.Helper()
	bin := fakeBinary(t, "1.2.3", "0123abc", "2026-05-28T20:26:40Z")
	var bins []platformBinary
	for _, p := range []string{hostPlatform, otherPlatform()} {
		b, err := parseBinary(p + "=" + bin)
		if err != nil {
			t.Fatal(err)
		}
		bins = append(bins, b)
	}
	return buildOptions{binaries: bins, epoch: 1780000000, version: "1.2.3", revision: "0123abc",
		source: "https://example.com/tdc", licenses: "Apache-2.0"}
}

// buildLayout builds o into a new layout and returns its directory.
func buildLayout(t *testing.T, o buildOptions) string {
	t.Helper()
	idx, err := buildIndex(o)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "layout")
	if err := writeLayout(dir, idx, o.version); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestBuildAndCheck builds an index from a fake binary twice and checks it
// with the check `make image-check` runs: both platforms, user, entrypoint,
// labels, files, --version of the host's binary and the same digest.
func TestBuildAndCheck(t *testing.T) {
	g := NewWithT(t)
	o := testOptions(t)
	first, second := buildLayout(t, o), buildLayout(t, o)
	var out bytes.Buffer
	err := check(checkOptions{layout: first, sameAs: second, platforms: []string{hostPlatform, otherPlatform()},
		version: "1.2.3", revision: "0123abc"}, &out)
	g.Expect(err).NotTo(HaveOccurred(), out.String())
	g.Expect(out.String()).To(ContainSubstring("--version: version: 1.2.3, commit: 0123abc, date: 2026-05-28T20:26:40Z"))
	g.Expect(out.String()).To(ContainSubstring("a second build has the same digest"))

	// writeLayout replaces an earlier layout rather than adding to it.
	idx, err := buildIndex(o)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(writeLayout(first, idx, o.version)).To(Succeed())
	_, _, err = readIndex(first)
	g.Expect(err).NotTo(HaveOccurred())
}

// TestCheckFindsFaults lifts one fault at a time and expects check to name it.
func TestCheckFindsFaults(t *testing.T) {
	tests := []struct {
		// name is the fault.
		name string
		// mutate makes it, on the options of a good build and on check's.
		mutate func(t *testing.T, b *buildOptions, c *checkOptions)
		// want is a substring of check's error.
		want string
	}{
		{name: "another version expected", want: `label org.opencontainers.image.version is "1.2.3", want "1.3.0"`,
			mutate: func(_ *testing.T, _ *buildOptions, c *checkOptions) { c.version = "1.3.0" }},
		{name: "binary stamped with another commit", want: `--version prints commit "fedcba9"`,
			mutate: func(t *testing.T, b *buildOptions, _ *checkOptions) {
				bin := fakeBinary(t, "1.2.3", "fedcba9", "2026-05-28T20:26:40Z")
				for i := range b.binaries {
					b.binaries[i].path = bin
				}
			}},
		{name: "a platform missing", want: "the index holds",
			mutate: func(_ *testing.T, b *buildOptions, _ *checkOptions) { b.binaries = b.binaries[:1] }},
		{name: "no label of licenses", want: "label org.opencontainers.image.licenses is missing",
			mutate: func(_ *testing.T, b *buildOptions, _ *checkOptions) { b.licenses = "" }},
		{name: "another build time", want: "not reproducible",
			mutate: func(t *testing.T, b *buildOptions, c *checkOptions) {
				other := *b
				other.epoch++
				c.sameAs = buildLayout(t, other)
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			b := testOptions(t)
			c := checkOptions{platforms: []string{hostPlatform, otherPlatform()}, version: "1.2.3", revision: "0123abc"}
			tt.mutate(t, &b, &c)
			c.layout = buildLayout(t, b)
			var out bytes.Buffer
			err := check(c, &out)
			g.Expect(err).To(MatchError(ContainSubstring(tt.want)), out.String())
		})
	}
}

// TestRunUsage checks the command line: a missing flag or command is a
// usage error (exit 2), a bad --binary is refused.
func TestRunUsage(t *testing.T) {
	g := NewWithT(t)
	var out bytes.Buffer
	ctx := context.Background()
	g.Expect(run(ctx, "build", []string{"--out", t.TempDir()}, &out)).To(MatchError(errUsage))
	g.Expect(run(ctx, "check", nil, &out)).To(MatchError(errUsage))
	g.Expect(run(ctx, "push", []string{"--layout", "x"}, &out)).To(MatchError(errUsage))
	g.Expect(run(ctx, "tag", nil, &out)).To(MatchError(errUsage))
	err := run(ctx, "build", []string{"--binary", "linux-amd64=/bin/true"}, &out)
	g.Expect(err).To(MatchError(ContainSubstring("want OS/ARCH=PATH")))
	b, err := parseBinary("linux/arm64=/x")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(b.platform.Variant).To(Equal("v8"))
	g.Expect(b.path).To(Equal("/x"))
}
