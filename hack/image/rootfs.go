package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"slices"
	"strings"
	"time"

	"golang.org/x/crypto/x509roots/fallback/bundle"
)

// The image's user: distroless's nonroot, which the chart's and config/'s
// security contexts (runAsNonRoot) and the Dockerfile's image expect.
const (
	nonrootUID = 65532
	nonrootGID = 65532
	// imageUser is the config's User.
	imageUser = "65532:65532"
	// binaryPath is where the controller lies in the image, and the
	// entrypoint; the Dockerfile's image puts it at the same path.
	binaryPath = "/template-drift-controller"
	// caBundlePath is where Go's crypto/x509 looks first on Linux.
	caBundlePath = "/etc/ssl/certs/ca-certificates.crt"
)

// passwd and group hold root and nonroot, as distroless's: a process that
// looks its user up (os/user, ssh, git) finds a name and a home.
const (
	passwd = "root:x:0:0:root:/root:/sbin/nologin\n" +
		"nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"
	group = "root:x:0:\nnonroot:x:65532:\n"
)

// entry is one file or directory of the layer.
type entry struct {
	name     string // without the leading slash
	mode     int64
	uid, gid int
	data     []byte // nil for a directory or a link
	link     string // the target of a symbolic link
}

// rootFS returns the layer's entries, parents before children: the
// controller binary, the CA bundle, passwd and group, the nonroot user's
// home and a world-writable /tmp (the chart mounts an emptyDir there; a
// plain `docker run` gets one too).
func rootFS(binary []byte) ([]entry, error) {
	certs, err := caBundle()
	if err != nil {
		return nil, err
	}
	dir := func(name string, mode int64, id int) entry {
		return entry{name: name, mode: mode, uid: id, gid: id}
	}
	file := func(name string, mode int64, data []byte) entry {
		return entry{name: name, mode: mode, data: data}
	}
	entries := []entry{
		dir("etc/", 0o755, 0),
		file("etc/group", 0o644, []byte(group)),
		file("etc/passwd", 0o644, []byte(passwd)),
		dir("etc/ssl/", 0o755, 0),
		dir("etc/ssl/certs/", 0o755, 0),
		file("etc/ssl/certs/ca-certificates.crt", 0o644, certs),
		dir("home/", 0o755, 0),
		dir("home/nonroot/", 0o700, nonrootUID),
		file(binaryPath[1:], 0o755, binary),
		dir("tmp/", 0o1777, 0),
	}
	// Sorted by name, so the layer's order depends on nothing else.
	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.name, b.name) })
	return entries, nil
}

// caBundle returns the CA bundle as PEM: the Mozilla NSS roots that Go's
// golang.org/x/crypto/x509roots/fallback module embeds. Its version is
// pinned in this module's go.mod and its hash in go.sum, so every machine
// builds the same bundle, unlike a copy of the build host's
// /etc/ssl/certs. Roots that NSS distrusts after a date are left out: a
// PEM file cannot carry that constraint.
func caBundle() ([]byte, error) {
	var b bytes.Buffer
	for root := range bundle.Roots() {
		if root.Constraint != nil {
			continue
		}
		if _, err := x509.ParseCertificate(root.Certificate); err != nil {
			return nil, fmt.Errorf("failed to parse a root of the fallback bundle: %w", err)
		}
		if err := pem.Encode(&b, &pem.Block{Type: "CERTIFICATE", Bytes: root.Certificate}); err != nil {
			return nil, fmt.Errorf("failed to encode a root as PEM: %w", err)
		}
	}
	return b.Bytes(), nil
}

// layerTar writes entries as a tar stream whose bytes depend only on the
// entries and mtime: a fixed order, owners by number without names, one
// timestamp in whole seconds and no access or change times, so the writer
// needs no PAX records.
func layerTar(entries []entry, mtime time.Time) ([]byte, error) {
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, e := range entries {
		h := &tar.Header{
			Name:    e.name,
			Mode:    e.mode,
			Uid:     e.uid,
			Gid:     e.gid,
			ModTime: mtime,
		}
		switch {
		case e.link != "":
			h.Typeflag, h.Linkname = tar.TypeSymlink, e.link
		case e.data == nil:
			h.Typeflag = tar.TypeDir
		default:
			h.Typeflag = tar.TypeReg
			h.Size = int64(len(e.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("failed to write the tar header of %s: %w", e.name, err)
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, fmt.Errorf("failed to write %s to the layer: %w", e.name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("failed to close the layer: %w", err)
	}
	return b.Bytes(), nil
}

// gzipped compresses data with a gzip header that holds no name and no
// time, so the compressed layer, and so its digest, is as reproducible as
// the tar stream.
func gzipped(data []byte) ([]byte, error) {
	var b bytes.Buffer
	zw, err := gzip.NewWriterLevel(&b, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(data); err != nil {
		return nil, fmt.Errorf("failed to compress the layer: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("failed to compress the layer: %w", err)
	}
	return b.Bytes(), nil
}
