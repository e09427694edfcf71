package framework

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"time"

	"helm.sh/helm/v4/pkg/chart/common"
	chartutil "helm.sh/helm/v4/pkg/chart/common/util"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartv2util "helm.sh/helm/v4/pkg/chart/v2/util"
	"helm.sh/helm/v4/pkg/engine"
	"sigs.k8s.io/yaml"
)

// ChartRepo is a Helm chart repository served on 127.0.0.1.
type ChartRepo struct {
	// URL is the repository URL for a HelmRepository.
	URL string
	srv *httptest.Server
	dir string
}

// ServeChart packages the chart in chartDir with Helm's own library and
// serves it with an index.yaml on a loopback port.
func ServeChart(chartDir string) (*ChartRepo, error) {
	c, err := loader.LoadDir(chartDir)
	if err != nil {
		return nil, fmt.Errorf("failed to load chart %s: %w", chartDir, err)
	}
	dir, err := os.MkdirTemp("", "tdc-e2e-charts-")
	if err != nil {
		return nil, err
	}
	tgz, err := chartv2util.Save(c, dir)
	if err != nil {
		return nil, fmt.Errorf("failed to package chart: %w", err)
	}
	data, err := os.ReadFile(tgz)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := httptest.NewUnstartedServer(http.FileServer(http.Dir(dir)))
	srv.Listener = l
	srv.Start()
	r := &ChartRepo{URL: srv.URL, srv: srv, dir: dir}
	index := map[string]any{
		"apiVersion": "v1",
		"generated":  time.Now().UTC().Format(time.RFC3339),
		"entries": map[string]any{c.Metadata.Name: []any{map[string]any{
			"apiVersion": "v2", "name": c.Metadata.Name, "version": c.Metadata.Version,
			"digest": hex.EncodeToString(sum[:]), "created": time.Now().UTC().Format(time.RFC3339),
			"urls": []string{srv.URL + "/" + filepath.Base(tgz)},
		}}},
	}
	b, err := yaml.Marshal(index)
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "index.yaml"), b, 0o644)
	}
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("failed to write index.yaml: %w", err)
	}
	return r, nil
}

// Close stops the server and removes the files.
func (r *ChartRepo) Close() {
	r.srv.Close()
	_ = os.RemoveAll(r.dir)
}

// RenderChart renders chartDir with values as `helm template` would, for
// tests of the chart itself.
func RenderChart(chartDir string, values map[string]any) (map[string]string, error) {
	c, err := loader.LoadDir(chartDir)
	if err != nil {
		return nil, err
	}
	vals, err := chartutil.ToRenderValues(c, values, common.ReleaseOptions{Name: "cluster", Namespace: "default"}, common.DefaultCapabilities)
	if err != nil {
		return nil, err
	}
	return engine.Render(c, vals)
}
