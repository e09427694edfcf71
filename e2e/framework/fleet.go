package framework

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// PushFleet pushes the folder dir to the registry's fleet repository under
// tag with the flux CLI, as a fleet's CI publishes its main branch for an
// OCIRepository, and returns the repository's oci:// URL.
func (r *OCIRegistry) PushFleet(ctx context.Context, fluxBin, kubeconfig, dir, tag string) (string, error) {
	url := "oci://" + r.Host + "/fleet"
	sum := sha1.Sum([]byte(dir + tag))
	if _, err := FluxCLI(ctx, fluxBin, kubeconfig, "push", "artifact", url+":"+tag, "--path", dir,
		"--source", "e2e", "--revision", tag+"@sha1:"+hex.EncodeToString(sum[:]), "--insecure-registry"); err != nil {
		return "", err
	}
	return url, nil
}

// CopyDir copies the folder src into dst (a new folder), as a checkout of
// a repository a pull request then edits.
func CopyDir(src, dst string) error {
	return filepath.Walk(src, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		if info.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
}

// RenderedObjects renders chartDir with values (RenderChart) and returns
// its objects of the given kinds.
func RenderedObjects(chartDir string, values map[string]any, kinds ...string) ([]*unstructured.Unstructured, error) {
	files, err := RenderChart(chartDir, values)
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for name, content := range files {
		if !strings.HasSuffix(name, ".yaml") {
			continue
		}
		for _, doc := range strings.Split(content, "\n---") {
			u := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			for _, k := range kinds {
				if len(u.Object) > 0 && u.GetKind() == k {
					out = append(out, u)
				}
			}
		}
	}
	return out, nil
}
