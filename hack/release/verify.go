package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"helm.sh/helm/v4/pkg/chart/v2/loader"
)

// verifyOptions says which release verify reads and what it must hold.
type verifyOptions struct {
	dir, version, commit string
	// cliPlatform is the platform of the CLI archive whose binary is run;
	// it must be the host's.
	cliPlatform string
}

// verify checks a release directory as a user would before trusting it:
// every checksum, the chart's versions, install.yaml pinned to the image's
// index digest, the CLI of the host's platform saying its version and
// commit, and SBOMs naming the release and the image.
func verify(o verifyOptions) error {
	name := func(f string) string { return filepath.Join(o.dir, fmt.Sprintf(f, o.version)) }
	digest, err := layoutDigest(name("template-drift-controller_%s_image.oci.tar"))
	if err != nil {
		return err
	}
	return errors.Join(
		verifySums(o.dir),
		verifyChart(name("template-drift-controller-%s.tgz"), o.version),
		verifyContains(filepath.Join(o.dir, "install.yaml"), "@"+digest+"\n"),
		verifyContains(name("template-drift-controller_%s_image.sbom.cdx.json"), strings.Replace(digest, ":", "%3A", 1)),
		verifyContains(name("template-drift-controller_%s.sbom.cdx.json"), `"version": "v`+o.version+`"`),
		verifyContains(name("templatedrift_%s.sbom.cdx.json"), `"version": "v`+o.version+`"`),
		verifyContains(filepath.Join(o.dir, "RELEASE_NOTES.md"), "\n"),
		verifyCLI(o, name("templatedrift_%s_"+strings.ReplaceAll(o.cliPlatform, "/", "_")+".tar.gz")),
	)
}

// verifySums checks every line of SHA256SUMS, and that it lists every file.
func verifySums(dir string) error {
	data, err := os.ReadFile(filepath.Join(dir, "SHA256SUMS"))
	if err != nil {
		return err
	}
	listed := map[string]bool{"SHA256SUMS": true}
	var errs []error
	s := bufio.NewScanner(bytes.NewReader(data))
	for s.Scan() {
		want, file, ok := strings.Cut(s.Text(), "  ")
		if !ok {
			return fmt.Errorf("SHA256SUMS: malformed line %q", s.Text())
		}
		listed[file] = true
		content, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if sum := sha256.Sum256(content); hex.EncodeToString(sum[:]) != want {
			errs = append(errs, fmt.Errorf("SHA256SUMS: %s does not match its checksum", file))
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !listed[e.Name()] {
			errs = append(errs, fmt.Errorf("SHA256SUMS does not list %s", e.Name()))
		}
	}
	return errors.Join(errs...)
}

// verifyChart checks the packaged chart's version and appVersion.
func verifyChart(path, version string) error {
	ch, err := loader.LoadFile(path)
	if err != nil {
		return fmt.Errorf("failed to load the chart %s: %w", path, err)
	}
	if ch.Metadata.Version != version || ch.Metadata.AppVersion != version {
		return fmt.Errorf("the chart %s has version %s and appVersion %s, want %s", path, ch.Metadata.Version, ch.Metadata.AppVersion, version)
	}
	return nil
}

// verifyContains checks that a file holds s.
func verifyContains(path, s string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if !bytes.Contains(data, []byte(s)) {
		return fmt.Errorf("%s does not contain %q", path, s)
	}
	return nil
}

// layoutDigest reads the digest of the one index of an OCI layout tarball.
func layoutDigest(path string) (string, error) {
	files, err := untar(path, false)
	if err != nil {
		return "", err
	}
	var index struct {
		Manifests []struct {
			Digest string `json:"digest"`
		} `json:"manifests"`
	}
	if err := json.Unmarshal(files["index.json"], &index); err != nil {
		return "", fmt.Errorf("%s: failed to read index.json: %w", path, err)
	}
	if len(index.Manifests) != 1 {
		return "", fmt.Errorf("%s: want an index.json with one index, got %d", path, len(index.Manifests))
	}
	return index.Manifests[0].Digest, nil
}

// verifyCLI takes the CLI out of its archive, checks the archive's other
// files, and runs its `version`.
func verifyCLI(o verifyOptions, archive string) error {
	files, err := untar(archive, true)
	if err != nil {
		return err
	}
	for _, want := range []string{"templatedrift", "LICENSE", "README.md", "kubectl-templatedrift"} {
		if _, ok := files[want]; !ok {
			return fmt.Errorf("%s holds no %s", archive, want)
		}
	}
	bin := filepath.Join(os.TempDir(), fmt.Sprintf("templatedrift-verify-%d", os.Getpid()))
	if err := os.WriteFile(bin, files["templatedrift"], 0o755); err != nil {
		return err
	}
	defer os.Remove(bin)
	out, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s version: %w: %s", archive, err, out)
	}
	for _, want := range []string{"version: " + o.version + "\n", "commit: " + o.commit + "\n"} {
		if !strings.Contains(string(out), want) {
			return fmt.Errorf("%s version prints %q, want a line %q", archive, out, want)
		}
	}
	return nil
}

// untar reads a tar (gzipped or not) into memory; a link's content is its
// target.
func untar(path string, gzipped bool) (map[string][]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = f
	if gzipped {
		zr, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		r = zr
	}
	files := map[string][]byte{}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if h.Typeflag == tar.TypeSymlink {
			data = []byte(h.Linkname)
		}
		files[h.Name] = data
	}
}
