package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// minRoots is a floor on the CA bundle's size: NSS has had well over a
// hundred roots for years, so fewer means a broken bundle.
const minRoots = 100

// checkOptions say what check expects of a layout.
type checkOptions struct {
	// layout is the OCI layout that `build` wrote.
	layout string
	// sameAs is a second build's layout whose index must have the same
	// digest; "" skips that comparison.
	sameAs string
	// platforms are the platforms the index must hold, exactly, as os/arch.
	platforms []string
	// version and revision are the labels' expected values; "" accepts any
	// non-empty value.
	version, revision string
}

// check reads the layout and returns every way it falls short: the index
// holds exactly the platforms, each config runs the entrypoint as
// 65532:65532 and carries the labels, each layer holds the binary, passwd,
// group and a CA bundle, the binary of the host's platform prints the
// labels' version, revision and date with --version, and a second build
// has the same digest. It writes what it found to w.
func check(o checkOptions, w io.Writer) error {
	idx, desc, err := readIndex(o.layout)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "index %s (%s)\n", desc.Digest, desc.Annotations[refNameAnnotation])
	m, err := idx.IndexManifest()
	if err != nil {
		return fmt.Errorf("failed to read the index: %w", err)
	}
	var errs []error
	var got []string
	ranVersion := false
	for _, d := range m.Manifests {
		if d.Platform == nil {
			errs = append(errs, fmt.Errorf("manifest %s has no platform", d.Digest))
			continue
		}
		got = append(got, d.Platform.OS+"/"+d.Platform.Architecture)
		img, err := idx.Image(d.Digest)
		if err != nil {
			errs = append(errs, fmt.Errorf("failed to read the %s image: %w", d.Platform, err))
			continue
		}
		host := d.Platform.OS == runtime.GOOS && d.Platform.Architecture == runtime.GOARCH
		out, err := checkImage(img, *d.Platform, o, host)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", d.Platform, err))
		}
		ranVersion = ranVersion || (host && err == nil)
		fmt.Fprintf(w, "  %s %s%s\n", d.Platform, d.Digest, out)
	}
	if want := sortedCopy(o.platforms); !slices.Equal(sortedCopy(got), want) {
		errs = append(errs, fmt.Errorf("the index holds %v, want %v", got, want))
	}
	if !ranVersion {
		errs = append(errs, fmt.Errorf("no image for the host's platform %s/%s ran --version", runtime.GOOS, runtime.GOARCH))
	}
	if o.sameAs != "" {
		_, other, err := readIndex(o.sameAs)
		switch {
		case err != nil:
			errs = append(errs, err)
		case other.Digest != desc.Digest:
			errs = append(errs, fmt.Errorf("not reproducible: %s has index %s, %s has %s", o.layout, desc.Digest, o.sameAs, other.Digest))
		default:
			fmt.Fprintf(w, "  a second build has the same digest\n")
		}
	}
	return errors.Join(errs...)
}

// checkImage checks one platform's image and returns a summary for the
// report; with host, it also runs the binary's --version.
func checkImage(img v1.Image, p v1.Platform, o checkOptions, host bool) (string, error) {
	cf, err := img.ConfigFile()
	if err != nil {
		return "", fmt.Errorf("failed to read the config: %w", err)
	}
	var errs []error
	if cf.OS != p.OS || cf.Architecture != p.Architecture {
		errs = append(errs, fmt.Errorf("config is for %s/%s", cf.OS, cf.Architecture))
	}
	if cf.Config.User != imageUser {
		errs = append(errs, fmt.Errorf("user is %q, want %q", cf.Config.User, imageUser))
	}
	if !slices.Equal(cf.Config.Entrypoint, []string{binaryPath}) {
		errs = append(errs, fmt.Errorf("entrypoint is %q, want [%s]", cf.Config.Entrypoint, binaryPath))
	}
	labels := cf.Config.Labels
	errs = append(errs, checkLabels(labels, o, cf.Created.Time)...)
	files, err := layerFiles(img)
	if err != nil {
		return "", errors.Join(append(errs, err)...)
	}
	errs = append(errs, checkFiles(files)...)
	summary := fmt.Sprintf(": user %s, entrypoint %s, %d MiB binary", cf.Config.User, cf.Config.Entrypoint, len(files[binaryPath[1:]])>>20)
	if host && len(errs) == 0 {
		out, err := runVersion(files[binaryPath[1:]], labels)
		if err != nil {
			errs = append(errs, err)
		}
		summary += "; --version: " + strings.ReplaceAll(strings.TrimSpace(out), "\n", ", ")
	}
	return summary, errors.Join(errs...)
}

// checkLabels checks that every required label is set, that version and
// revision are the expected ones, and that created is the config's time.
func checkLabels(labels map[string]string, o checkOptions, created time.Time) []error {
	var errs []error
	for _, k := range requiredLabels {
		if labels[k] == "" {
			errs = append(errs, fmt.Errorf("label %s is missing", k))
		}
	}
	for k, want := range map[string]string{labelVersion: o.version, labelRevision: o.revision, labelCreated: created.UTC().Format(time.RFC3339)} {
		if want != "" && labels[k] != want {
			errs = append(errs, fmt.Errorf("label %s is %q, want %q", k, labels[k], want))
		}
	}
	return errs
}

// layerFiles returns the regular files of the image's one layer by path
// (without the leading slash).
func layerFiles(img v1.Image) (map[string][]byte, error) {
	layers, err := img.Layers()
	if err != nil {
		return nil, fmt.Errorf("failed to list the layers: %w", err)
	}
	if len(layers) != 1 {
		return nil, fmt.Errorf("want 1 layer, got %d", len(layers))
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		return nil, fmt.Errorf("failed to read the layer: %w", err)
	}
	defer rc.Close()
	files := map[string][]byte{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files, nil
		}
		if err != nil {
			return nil, fmt.Errorf("failed to read the layer: %w", err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		if h.Name == binaryPath[1:] && h.Mode&0o111 == 0 {
			return nil, fmt.Errorf("%s is not executable (mode %o)", binaryPath, h.Mode)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return nil, fmt.Errorf("failed to read %s from the layer: %w", h.Name, err)
		}
		files[h.Name] = data
	}
}

// checkFiles checks the layer's files: the binary, the nonroot user and
// group, and a CA bundle Go can load.
func checkFiles(files map[string][]byte) []error {
	var errs []error
	if len(files[binaryPath[1:]]) == 0 {
		errs = append(errs, fmt.Errorf("no %s in the layer", binaryPath))
	}
	if !strings.Contains(string(files["etc/passwd"]), fmt.Sprintf("nonroot:x:%d:%d:", nonrootUID, nonrootGID)) {
		errs = append(errs, fmt.Errorf("/etc/passwd has no nonroot user %d", nonrootUID))
	}
	if !strings.Contains(string(files["etc/group"]), fmt.Sprintf("nonroot:x:%d:", nonrootGID)) {
		errs = append(errs, fmt.Errorf("/etc/group has no nonroot group %d", nonrootGID))
	}
	certs := files[caBundlePath[1:]]
	if n := bytes.Count(certs, []byte("-----BEGIN CERTIFICATE-----")); n < minRoots || !x509.NewCertPool().AppendCertsFromPEM(certs) {
		errs = append(errs, fmt.Errorf("%s holds %d certificates, want at least %d that Go loads", caBundlePath, n, minRoots))
	}
	return errs
}

// runVersion runs the binary with --version and checks that it prints the
// labels' version, revision and date (the build stamped all from the same
// make variables). It returns the output.
func runVersion(binary []byte, labels map[string]string) (string, error) {
	dir, err := os.MkdirTemp("", "image-check-")
	if err != nil {
		return "", fmt.Errorf("failed to make a temporary directory: %w", err)
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, filepath.Base(binaryPath))
	if err := os.WriteFile(bin, binary, 0o755); err != nil {
		return "", fmt.Errorf("failed to extract the binary: %w", err)
	}
	out, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("--version failed: %w\n%s", err, out)
	}
	printed := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ": "); ok {
			printed[k] = v
		}
	}
	var errs []error
	for key, label := range map[string]string{"version": labelVersion, "commit": labelRevision, "date": labelCreated} {
		if printed[key] != labels[label] {
			errs = append(errs, fmt.Errorf("--version prints %s %q, label %s is %q", key, printed[key], label, labels[label]))
		}
	}
	return string(out), errors.Join(errs...)
}

func sortedCopy(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}
