package scale

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// The fleet's chart, as the stored releases name it (testenv.Release): the
// archive helm-controller loads must carry the same name and version, or it
// finds every release out of sync and upgrades it.
const (
	chartName    = "cluster"
	chartVersion = "1.0.0"
)

// chartFile is the archive's name, under the server's root.
const chartFile = chartName + "-" + chartVersion + ".tgz"

// chartYAML is the chart's only file. helm-controller in warn mode reads
// the chart's metadata to decide whether a release is up to date and
// diffs the stored release's manifest, never the chart's templates, so
// the chart needs none.
const chartYAML = "apiVersion: v2\nname: " + chartName + "\nversion: " + chartVersion +
	"\ndescription: The fleet's chart for helm-controller in the scale benchmark (metadata only).\ntype: application\n"

// chartArchive returns the chart packaged as `helm package` lays it out
// (cluster/Chart.yaml in a gzipped tar), with a fixed modification time so
// that its digest does not change from run to run.
func chartArchive() ([]byte, error) {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	hdr := &tar.Header{Name: chartName + "/Chart.yaml", Mode: 0o644, Size: int64(len(chartYAML)),
		ModTime: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Typeflag: tar.TypeReg}
	if err := tw.WriteHeader(hdr); err != nil {
		return nil, fmt.Errorf("failed to package the chart: %w", err)
	}
	if _, err := tw.Write([]byte(chartYAML)); err != nil {
		return nil, fmt.Errorf("failed to package the chart: %w", err)
	}
	if err := errors.Join(tw.Close(), gz.Close()); err != nil {
		return nil, fmt.Errorf("failed to package the chart: %w", err)
	}
	return buf.Bytes(), nil
}

// sha256Digest returns b's digest as Flux artifacts carry it,
// "sha256:<hex>".
func sha256Digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// ChartServer serves the chart archive on 127.0.0.1, where the HelmCharts'
// artifact URLs point: it stands in for source-controller's artifact
// server, which the benchmark does not run.
type ChartServer struct {
	// URL is the archive's URL, Digest its "sha256:..." digest and Size its
	// length, as a HelmChart's status.artifact gives them.
	URL    string
	Digest string
	Size   int64

	srv *http.Server
}

// ServeChart packages the chart and serves it until Close.
func ServeChart() (*ChartServer, error) {
	archive, err := chartArchive()
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("failed to listen for the chart server: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/"+chartFile, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/gzip")
		_, _ = w.Write(archive)
	})
	s := &ChartServer{URL: "http://" + l.Addr().String() + "/" + chartFile, Digest: sha256Digest(archive),
		Size: int64(len(archive)), srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}}
	go func() { _ = s.srv.Serve(l) }()
	return s, nil
}

// Close stops the server. It is safe on a nil server.
func (s *ChartServer) Close() {
	if s != nil {
		_ = s.srv.Close()
	}
}
