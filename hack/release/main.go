// Command release assembles the parts of a release that the controller's
// own libraries build (make release, docs/release.md):
//
//	release chart --chart DIR --out DIR --epoch N
//	release install --config DIR --image REPOSITORY@DIGEST --version V --out FILE
//	release push-chart --chart FILE.tgz --repository REGISTRY/PATH [--plain-http] --epoch N
//	release verify --dir DIR --version V --commit C --cli-platform OS/ARCH
//
// The chart is packaged and pushed with Helm's SDK, install.yaml is built
// with kustomize's, so that what is released is what `helm package`,
// `helm push` and `kustomize build` give. The image and the archives are
// hack/image's (go-containerregistry, a module of its own).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

const usage = `usage: release chart|install|push-chart|verify [flags]; release COMMAND -h lists a command's flags`

// errUsage is a command line the tool cannot run.
var errUsage = errors.New(usage)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, usage)
		os.Exit(2)
	}
	err := run(os.Args[1], os.Args[2:], os.Stdout)
	switch {
	case errors.Is(err, flag.ErrHelp):
		os.Exit(0)
	case errors.Is(err, errUsage):
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

// run runs one command with its arguments.
func run(cmd string, args []string, w io.Writer) error {
	fs := flag.NewFlagSet("release "+cmd, flag.ContinueOnError)
	switch cmd {
	case "chart":
		return runChart(fs, args, w)
	case "install":
		return runInstall(fs, args, w)
	case "push-chart":
		return runPushChart(fs, args, w)
	case "verify":
		return runVerify(fs, args, w)
	}
	return fmt.Errorf("%w: unknown command %q", errUsage, cmd)
}

// runChart packages a chart directory.
func runChart(fs *flag.FlagSet, args []string, w io.Writer) error {
	var dir, out string
	var epoch int64
	fs.StringVar(&dir, "chart", "", "The chart's directory.")
	fs.StringVar(&out, "out", "", "The directory to write NAME-VERSION.tgz into.")
	fs.Int64Var(&epoch, "epoch", 0, "SOURCE_DATE_EPOCH: the time of every file in the archive.")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if dir == "" || out == "" {
		return fmt.Errorf("%w: chart needs --chart and --out", errUsage)
	}
	path, err := packageChart(dir, out, epoch)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "chart packaged to %s\n", path)
	return nil
}

// runInstall writes install.yaml.
func runInstall(fs *flag.FlagSet, args []string, w io.Writer) error {
	var config, image, version, out string
	fs.StringVar(&config, "config", "config/default", "The kustomization to build.")
	fs.StringVar(&version, "version", "", "The release's version, named in the file's header.")
	fs.StringVar(&image, "image", "", "The controller image, pinned by digest: REPOSITORY@sha256:HEX.")
	fs.StringVar(&out, "out", "", "The file to write.")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if image == "" || version == "" || out == "" {
		return fmt.Errorf("%w: install needs --image, --version and --out", errUsage)
	}
	if err := writeInstall(config, image, version, out); err != nil {
		return err
	}
	fmt.Fprintf(w, "install manifest written to %s\n", out)
	return nil
}

// runPushChart pushes a packaged chart as an OCI artifact.
func runPushChart(fs *flag.FlagSet, args []string, w io.Writer) error {
	var o pushOptions
	fs.StringVar(&o.chart, "chart", "", "The packaged chart (.tgz).")
	fs.StringVar(&o.repository, "repository", "", "Where to push: REGISTRY/PATH; the chart lands at REGISTRY/PATH/NAME:VERSION.")
	fs.BoolVar(&o.plainHTTP, "plain-http", false, "Speak plain HTTP to the registry (a registry on 127.0.0.1).")
	fs.Int64Var(&o.epoch, "epoch", 0, "SOURCE_DATE_EPOCH: the manifest's created annotation, so that a push of one commit gives one digest.")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.chart == "" || o.repository == "" {
		return fmt.Errorf("%w: push-chart needs --chart and --repository", errUsage)
	}
	ref, digest, err := pushChart(o)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "chart pushed to oci://%s, digest %s\n", ref, digest)
	return nil
}

// runVerify checks a release directory.
func runVerify(fs *flag.FlagSet, args []string, w io.Writer) error {
	var o verifyOptions
	fs.StringVar(&o.dir, "dir", "", "The release directory.")
	fs.StringVar(&o.version, "version", "", "The version it must hold, without a v.")
	fs.StringVar(&o.commit, "commit", "", "The commit its binaries must say.")
	fs.StringVar(&o.cliPlatform, "cli-platform", "linux/amd64", "The CLI archive to run: the host's OS/ARCH.")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.dir == "" || o.version == "" || o.commit == "" {
		return fmt.Errorf("%w: verify needs --dir, --version and --commit", errUsage)
	}
	if err := verify(o); err != nil {
		return fmt.Errorf("the release in %s fails its checks:\n%w", o.dir, err)
	}
	fmt.Fprintf(w, "release %s in %s verified\n", o.version, o.dir)
	return nil
}
