package testenv

import (
	"bufio"
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

//go:embed crds/*.yaml
var fixtureCRDs embed.FS

// capiProviders names the clusterctl provider label of each upstream CAPI CRD
// group, as `clusterctl init` installs them.
var capiProviders = map[string]string{
	"cluster.x-k8s.io":              "cluster-api",
	"clusterctl.cluster.x-k8s.io":   "clusterctl",
	"bootstrap.cluster.x-k8s.io":    "bootstrap-kubeadm",
	"controlplane.cluster.x-k8s.io": "control-plane-kubeadm",
}

// LoadCRDs reads the upstream CRDs from dirs and the embedded fixtures, and
// adds to the Cluster API ones the labels their kustomize overlays would add
// (clusterctl's move label and the contract labels), which the module's
// config/crd/bases files lack.
func LoadCRDs(dirs []string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, dir := range dirs {
		crds, err := readCRDDir(dir)
		if err != nil {
			return nil, err
		}
		for _, crd := range crds {
			if provider, ok := capiProviders[crd.Spec.Group]; ok {
				labelProvider(crd, provider)
			}
		}
		out = append(out, crds...)
	}
	entries, err := fixtureCRDs.ReadDir("crds")
	if err != nil {
		return nil, fmt.Errorf("failed to list fixture CRDs: %w", err)
	}
	for _, e := range entries {
		data, err := fixtureCRDs.ReadFile("crds/" + e.Name())
		if err != nil {
			return nil, fmt.Errorf("failed to read fixture CRD %s: %w", e.Name(), err)
		}
		crds, err := decodeCRDs(data)
		if err != nil {
			return nil, fmt.Errorf("failed to decode fixture CRD %s: %w", e.Name(), err)
		}
		out = append(out, crds...)
	}
	return out, nil
}

// readCRDDir decodes every CRD in dir's YAML files, in file-name order.
func readCRDDir(dir string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, fmt.Errorf("failed to list CRDs in %s: %w", dir, err)
	}
	sort.Strings(files)
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("failed to read CRD %s: %w", f, err)
		}
		crds, err := decodeCRDs(data)
		if err != nil {
			return nil, fmt.Errorf("failed to decode CRD %s: %w", f, err)
		}
		out = append(out, crds...)
	}
	return out, nil
}

// firstByName keeps the first CRD of each name: the real providers' CRDs
// come first, so they win over the base folders' copies of the same CRDs.
func firstByName(crds []*apiextensionsv1.CustomResourceDefinition) []*apiextensionsv1.CustomResourceDefinition {
	seen := map[string]bool{}
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, crd := range crds {
		if !seen[crd.Name] {
			seen[crd.Name] = true
			out = append(out, crd)
		}
	}
	return out
}

func decodeCRDs(data []byte) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	var out []*apiextensionsv1.CustomResourceDefinition
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(doc, crd); err != nil {
			return nil, err
		}
		if crd.Kind != "CustomResourceDefinition" {
			continue
		}
		out = append(out, crd)
	}
}

// labelProvider adds the labels clusterctl and the provider's kustomize
// overlay give a CRD: the move label, the provider name and one contract
// label per served v1beta* version, by which Cluster API finds the version
// of a referenced kind to use.
func labelProvider(crd *apiextensionsv1.CustomResourceDefinition, provider string) {
	if crd.Labels == nil {
		crd.Labels = map[string]string{}
	}
	crd.Labels["clusterctl.cluster.x-k8s.io"] = ""
	crd.Labels["cluster.x-k8s.io/provider"] = provider
	for _, v := range crd.Spec.Versions {
		if v.Served && strings.HasPrefix(v.Name, "v1beta") {
			crd.Labels["cluster.x-k8s.io/"+v.Name] = v.Name
		}
	}
}
