package chart_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/chart/common"
	chartutil "helm.sh/helm/v4/pkg/chart/common/util"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/engine"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/templatedrift/template-drift-controller/internal/testenv"
)

// The release the chart is rendered as: the names config/default uses.
const (
	releaseName = "template-drift-controller"
	namespace   = "flux-system"
)

// repoPath returns a path below the repository root.
func repoPath(t testing.TB, elem ...string) string {
	t.Helper()
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(append([]string{root}, elem...)...)
}

func chartDir(t testing.TB) string {
	return repoPath(t, "charts", "template-drift-controller")
}

// kubeVersion is the version of the test control plane (hack/versions.env),
// so renders and lint see the cluster the dry-run test validates against;
// Helm's own default in test binaries is v1.20.
func kubeVersion(t testing.TB) *common.KubeVersion {
	t.Helper()
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	v, err := testenv.Versions(root)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := common.ParseKubeVersion(v["KUBE_VERSION"])
	if err != nil {
		t.Fatal(err)
	}
	return kv
}

func loadChart(t testing.TB) *chart.Chart {
	t.Helper()
	ch, err := loader.LoadDir(chartDir(t))
	if err != nil {
		t.Fatalf("failed to load chart: %v", err)
	}
	return ch
}

// renderChart renders the chart as `helm template` would, with vals over
// values.yaml; the values are validated against values.schema.json. It
// returns the rendered files by template path.
func renderChart(t testing.TB, vals map[string]any) (map[string]string, error) {
	t.Helper()
	return renderRelease(t, vals, releaseName, namespace)
}

// renderRelease renders the chart as release name in namespace ns.
func renderRelease(t testing.TB, vals map[string]any, name, ns string) (map[string]string, error) {
	t.Helper()
	ch := loadChart(t)
	caps := common.DefaultCapabilities.Copy()
	caps.KubeVersion = *kubeVersion(t)
	top, err := chartutil.ToRenderValues(ch, vals, common.ReleaseOptions{
		Name: name, Namespace: ns, Revision: 1, IsInstall: true,
	}, caps)
	if err != nil {
		return nil, err
	}
	return engine.Render(ch, top)
}

// readValues reads a values file from testdata; "" is no values.
func readValues(t testing.TB, name string) map[string]any {
	t.Helper()
	if name == "" {
		return map[string]any{}
	}
	vals, err := common.ReadValuesFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return vals
}

// readValuesString parses inline values.
func readValuesString(s string) (map[string]any, error) {
	return common.ReadValues([]byte(s))
}

// manifest is the rendered output as `helm template` prints it: every
// non-empty template except NOTES.txt, sorted by path, with Source comments.
func manifest(files map[string]string) string {
	var paths []string
	for p, s := range files {
		if strings.HasSuffix(p, "NOTES.txt") || strings.TrimSpace(s) == "" {
			continue
		}
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var b strings.Builder
	for _, p := range paths {
		fmt.Fprintf(&b, "---\n# Source: %s\n%s\n", p, strings.TrimSpace(files[p]))
	}
	return b.String()
}

// mustRender renders the chart with a testdata values file and returns its
// manifest and objects.
func mustRender(t testing.TB, valuesFile string) (string, []*unstructured.Unstructured) {
	t.Helper()
	files, err := renderChart(t, readValues(t, valuesFile))
	if err != nil {
		t.Fatalf("failed to render chart with %q: %v", valuesFile, err)
	}
	m := manifest(files)
	objs, err := decodeObjects([]byte(m))
	if err != nil {
		t.Fatalf("failed to decode chart render with %q: %v", valuesFile, err)
	}
	return m, objs
}

// buildKustomize builds a config/ overlay as `kubectl kustomize` would.
func buildKustomize(t testing.TB, dir string) []*unstructured.Unstructured {
	t.Helper()
	res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), repoPath(t, dir))
	if err != nil {
		t.Fatalf("failed to build %s: %v", dir, err)
	}
	out, err := res.AsYaml()
	if err != nil {
		t.Fatal(err)
	}
	objs, err := decodeObjects(out)
	if err != nil {
		t.Fatalf("failed to decode %s: %v", dir, err)
	}
	return objs
}

// decodeObjects splits a multi-document YAML stream into objects, skipping
// empty documents.
func decodeObjects(data []byte) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		var m map[string]any
		if err := yaml.Unmarshal(doc, &m); err != nil {
			return nil, fmt.Errorf("failed to parse %q: %w", doc, err)
		}
		if len(m) == 0 {
			continue
		}
		out = append(out, &unstructured.Unstructured{Object: m})
	}
}

// readObjects decodes a YAML file of the repository.
func readObjects(t testing.TB, elem ...string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(repoPath(t, elem...))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := decodeObjects(data)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// ofKind returns the objects of kind.
func ofKind(objs []*unstructured.Unstructured, kind string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == kind {
			out = append(out, o)
		}
	}
	return out
}

// objectKey names an object in failure messages and maps.
func objectKey(o *unstructured.Unstructured) string {
	if o.GetNamespace() == "" {
		return o.GetKind() + " " + o.GetName()
	}
	return o.GetKind() + " " + o.GetNamespace() + "/" + o.GetName()
}
