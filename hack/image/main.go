// Command image builds, checks and pushes the controller's OCI image
// without a container daemon, with go-containerregistry. `make image`,
// `make image-check` and `make image-push` drive it; docs/release.md says
// why go-containerregistry rather than ko.
//
//	image build --out DIR --epoch N --version V --revision R --source URL --licenses SPDX --binary OS/ARCH=PATH...
//	image check --layout DIR [--same-as DIR] --platforms "OS/ARCH ..." [--version V] [--revision R]
//	image push --layout DIR --image REGISTRY/REPOSITORY:TAG
//	image digest --layout DIR
//	image sbom --layout DIR --repository REGISTRY/REPOSITORY --binary-sbom FILE --epoch N --licenses SPDX --out FILE
//	image archive --out FILE --epoch N [--gzip] (--dir DIR | --file NAME=PATH... [--link NAME=TARGET...])
//	image sums --dir DIR --out FILE
//
// The last four assemble a release (make release): the image's digest
// that install.yaml pins, the image's SBOM, the CLI archives and the
// layout's tarball, written as reproducibly as the image's layer, and
// SHA256SUMS.
//
// It is a module of its own, so that its dependencies (go-containerregistry,
// the Docker config reader it uses for registry credentials) stay out of
// the controller's go.mod.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

const usage = `usage: image build|check|push|digest|sbom|archive|sums [flags]; image COMMAND -h lists a command's flags`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, usage)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	err := run(ctx, os.Args[1], os.Args[2:], os.Stdout)
	switch {
	case errors.Is(err, flag.ErrHelp):
		os.Exit(0)
	case errors.Is(err, errUsage):
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

// errUsage is a command line the tool cannot run.
var errUsage = errors.New(usage)

// run runs one command with its arguments.
func run(ctx context.Context, cmd string, args []string, w io.Writer) error {
	fs := flag.NewFlagSet("image "+cmd, flag.ContinueOnError)
	switch cmd {
	case "build":
		return runBuild(fs, args, w)
	case "check":
		return runCheck(fs, args, w)
	case "push":
		return runPush(ctx, fs, args, w)
	case "digest":
		return runDigest(fs, args, w)
	case "sbom":
		return runSBOM(fs, args, w)
	case "archive":
		return runArchive(fs, args, w)
	case "sums":
		return runSums(fs, args, w)
	}
	return fmt.Errorf("%w: unknown command %q", errUsage, cmd)
}

// runBuild builds the index and writes the layout.
func runBuild(fs *flag.FlagSet, args []string, w io.Writer) error {
	var o buildOptions
	var out string
	fs.StringVar(&out, "out", "", "The OCI layout directory to write (replaced).")
	fs.Int64Var(&o.epoch, "epoch", 0, "SOURCE_DATE_EPOCH: the time of every file, the config and the created label.")
	fs.StringVar(&o.version, "version", "", "The version label, and the layout's ref name.")
	fs.StringVar(&o.revision, "revision", "", "The revision label: the git commit.")
	fs.StringVar(&o.source, "source", "", "The source label: the repository's URL.")
	fs.StringVar(&o.licenses, "licenses", "", "The licenses label: an SPDX expression.")
	fs.Func("binary", "OS/ARCH[/VARIANT]=PATH: a controller binary and its platform (repeat, in the index's order).", func(s string) error {
		b, err := parseBinary(s)
		o.binaries = append(o.binaries, b)
		return err
	})
	if err := fs.Parse(args); err != nil {
		return err
	}
	if out == "" || o.version == "" || o.revision == "" || o.source == "" || o.licenses == "" || len(o.binaries) == 0 {
		return fmt.Errorf("%w: build needs --out, --version, --revision, --source, --licenses and --binary", errUsage)
	}
	idx, err := buildIndex(o)
	if err != nil {
		return err
	}
	if err := writeLayout(out, idx, o.version); err != nil {
		return err
	}
	digest, err := idx.Digest()
	if err != nil {
		return fmt.Errorf("failed to compute the index digest: %w", err)
	}
	fmt.Fprintf(w, "image index %s with %d platforms written to %s\n", digest, len(o.binaries), out)
	return nil
}

// runCheck checks a layout.
func runCheck(fs *flag.FlagSet, args []string, w io.Writer) error {
	var o checkOptions
	var platforms string
	fs.StringVar(&o.layout, "layout", "", "The OCI layout to check.")
	fs.StringVar(&o.sameAs, "same-as", "", "A second build's layout, whose index must have the same digest.")
	fs.StringVar(&platforms, "platforms", "linux/amd64 linux/arm64", "The platforms the index must hold, space-separated.")
	fs.StringVar(&o.version, "version", "", "The expected version label.")
	fs.StringVar(&o.revision, "revision", "", "The expected revision label.")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.layout == "" {
		return fmt.Errorf("%w: check needs --layout", errUsage)
	}
	o.platforms = strings.Fields(platforms)
	if err := check(o, w); err != nil {
		return fmt.Errorf("the image in %s fails its checks:\n%w", o.layout, err)
	}
	fmt.Fprintln(w, "image check passed")
	return nil
}

// runPush pushes a layout's index.
func runPush(ctx context.Context, fs *flag.FlagSet, args []string, w io.Writer) error {
	var layoutDir, image string
	fs.StringVar(&layoutDir, "layout", "", "The OCI layout to push.")
	fs.StringVar(&image, "image", "", "Where to push: REGISTRY/REPOSITORY:TAG.")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if layoutDir == "" || image == "" {
		return fmt.Errorf("%w: push needs --layout and --image", errUsage)
	}
	return push(ctx, layoutDir, image, w)
}

// runDigest prints the digest of a layout's index.
func runDigest(fs *flag.FlagSet, args []string, w io.Writer) error {
	var layoutDir string
	fs.StringVar(&layoutDir, "layout", "", "The OCI layout.")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if layoutDir == "" {
		return fmt.Errorf("%w: digest needs --layout", errUsage)
	}
	_, desc, err := readIndex(layoutDir)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, desc.Digest)
	return nil
}

// runSBOM writes the image's SBOM.
func runSBOM(fs *flag.FlagSet, args []string, w io.Writer) error {
	var o sbomOptions
	fs.StringVar(&o.layout, "layout", "", "The OCI layout of the image.")
	fs.StringVar(&o.repository, "repository", "", "The image's repository, REGISTRY/REPOSITORY.")
	fs.StringVar(&o.binarySBOM, "binary-sbom", "", "The CycloneDX SBOM (JSON) of the image's binary.")
	fs.Int64Var(&o.epoch, "epoch", 0, "SOURCE_DATE_EPOCH: the SBOM's time.")
	fs.StringVar(&o.licenses, "licenses", "", "The image's licenses, an SPDX expression.")
	fs.StringVar(&o.out, "out", "", "The file to write.")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.layout == "" || o.repository == "" || o.binarySBOM == "" || o.out == "" {
		return fmt.Errorf("%w: sbom needs --layout, --repository, --binary-sbom and --out", errUsage)
	}
	if err := writeImageSBOM(o); err != nil {
		return err
	}
	fmt.Fprintf(w, "image SBOM written to %s\n", o.out)
	return nil
}

// runArchive writes a tar or tar.gz archive.
func runArchive(fs *flag.FlagSet, args []string, w io.Writer) error {
	var o archiveOptions
	fs.StringVar(&o.out, "out", "", "The archive to write.")
	fs.Int64Var(&o.epoch, "epoch", 0, "SOURCE_DATE_EPOCH: the time of every entry.")
	fs.BoolVar(&o.gzip, "gzip", false, "Compress the archive with gzip.")
	fs.StringVar(&o.dir, "dir", "", "A directory whose tree to archive, under relative names.")
	fs.Func("file", "NAME=PATH: a file to archive as NAME (repeat, in the archive's order).", func(s string) error {
		o.files = append(o.files, s)
		return nil
	})
	fs.Func("link", "NAME=TARGET: a symbolic link to archive after the files (repeat).", func(s string) error {
		o.links = append(o.links, s)
		return nil
	})
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.out == "" || (o.dir == "") == (len(o.files) == 0) {
		return fmt.Errorf("%w: archive needs --out and either --dir or --file", errUsage)
	}
	if err := writeArchive(o); err != nil {
		return fmt.Errorf("failed to write %s: %w", o.out, err)
	}
	fmt.Fprintf(w, "archive written to %s\n", o.out)
	return nil
}

// runSums writes SHA256SUMS.
func runSums(fs *flag.FlagSet, args []string, w io.Writer) error {
	var dir, out string
	fs.StringVar(&dir, "dir", "", "The directory whose files to sum.")
	fs.StringVar(&out, "out", "", "The file to write, in the directory (SHA256SUMS).")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if dir == "" || out == "" {
		return fmt.Errorf("%w: sums needs --dir and --out", errUsage)
	}
	if err := writeSums(dir, out); err != nil {
		return err
	}
	fmt.Fprintf(w, "checksums written to %s\n", out)
	return nil
}

// parseBinary parses OS/ARCH[/VARIANT]=PATH. An arm64 platform without a
// variant gets v8, as Go's default GOARM64 builds for and as registries
// list arm64 images.
func parseBinary(s string) (platformBinary, error) {
	plat, path, ok := strings.Cut(s, "=")
	if !ok || path == "" {
		return platformBinary{}, fmt.Errorf("want OS/ARCH=PATH, got %q", s)
	}
	p, err := v1.ParsePlatform(plat)
	if err != nil || p.OS == "" || p.Architecture == "" {
		return platformBinary{}, fmt.Errorf("want OS/ARCH=PATH, got %q", s)
	}
	if p.Architecture == "arm64" && p.Variant == "" {
		p.Variant = "v8"
	}
	return platformBinary{platform: *p, path: path}, nil
}
