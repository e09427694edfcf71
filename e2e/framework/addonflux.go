package framework

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/meta"
	"github.com/google/go-containerregistry/pkg/registry"
	helmv1 "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage"
	"helm.sh/helm/v4/pkg/storage/driver"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/templatedrift/template-drift-controller/internal/testenv"
)

// OCIRegistry is an OCI registry on 127.0.0.1 (go-containerregistry's, in
// memory), where the suite pushes the add-on's released chart for
// source-controller to pull.
type OCIRegistry struct {
	// Host is the registry's host:port.
	Host string
	srv  *httptest.Server
}

// StartOCIRegistry starts the registry on a loopback port.
func StartOCIRegistry() (*OCIRegistry, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := httptest.NewUnstartedServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	return &OCIRegistry{Host: l.Addr().String(), srv: srv}, nil
}

// Close stops the registry.
func (r *OCIRegistry) Close() { r.srv.Close() }

// PushAddonChart packages the chart in chartDir and pushes it to the
// registry's charts/ repository with the release tool, as `make release`
// and `make release-push` do, and returns the chart's oci:// URL.
func (r *OCIRegistry) PushAddonChart(ctx context.Context, releaseTool, chartDir, artifacts string) (string, error) {
	out := filepath.Join(artifacts, "release")
	run := func(args ...string) error {
		cmd := exec.CommandContext(ctx, releaseTool, args...)
		if b, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("%s %s: %w: %s", releaseTool, strings.Join(args, " "), err, b)
		}
		return nil
	}
	if err := run("chart", "--chart", chartDir, "--out", out); err != nil {
		return "", err
	}
	tgz, err := filepath.Glob(filepath.Join(out, "*.tgz"))
	if err != nil {
		return "", err
	}
	if len(tgz) != 1 {
		return "", fmt.Errorf("want one packaged chart in %s, got %v", out, tgz)
	}
	if err := run("push-chart", "--chart", tgz[0], "--repository", "oci://"+r.Host+"/charts", "--plain-http"); err != nil {
		return "", err
	}
	return "oci://" + r.Host + "/charts/" + AddonReleaseName, nil
}

// ApplyFluxInstall applies the documented Flux install (the OCIRepository
// and HelmRelease of fluxDir, config/flux) to env, with the OCIRepository
// pointed at url over plain HTTP and values over the documented ones. One
// change is the test's: helm-controller does not wait for the Deployment,
// whose Pods no kubelet runs here. It returns the HelmRelease's key.
func ApplyFluxInstall(ctx context.Context, env *testenv.Env, fluxDir, url string, values map[string]any) (client.ObjectKey, error) {
	repo, hr, err := readFluxInstall(fluxDir)
	if err != nil {
		return client.ObjectKey{}, err
	}
	if err := unstructured.SetNestedField(repo.Object, url, "spec", "url"); err != nil {
		return client.ObjectKey{}, err
	}
	if err := unstructured.SetNestedField(repo.Object, true, "spec", "insecure"); err != nil {
		return client.ObjectKey{}, err
	}
	merged := hr.GetValues()
	for k, v := range values {
		merged[k] = v
	}
	raw, err := json.Marshal(merged)
	if err != nil {
		return client.ObjectKey{}, err
	}
	hr.Spec.Values = &apiextensionsv1.JSON{Raw: raw}
	if hr.Spec.Install == nil {
		hr.Spec.Install = &helmv2.Install{}
	}
	hr.Spec.Install.DisableWait = true
	if err := env.Client.Create(ctx, repo); err != nil {
		return client.ObjectKey{}, fmt.Errorf("failed to create the OCIRepository: %w", err)
	}
	if err := env.Client.Create(ctx, hr); err != nil {
		return client.ObjectKey{}, fmt.Errorf("failed to create the HelmRelease: %w", err)
	}
	return client.ObjectKeyFromObject(hr), nil
}

// Installed returns nil once helm-controller has installed the
// HelmRelease (Ready True for its generation), and its Ready condition
// until then.
func Installed(ctx context.Context, c client.Client, key client.ObjectKey) error {
	hr := &helmv2.HelmRelease{}
	if err := c.Get(ctx, key, hr); err != nil {
		return err
	}
	ready := apimeta.FindStatusCondition(hr.Status.Conditions, meta.ReadyCondition)
	switch {
	case ready == nil:
		return fmt.Errorf("HelmRelease %s has no Ready condition yet", key)
	case ready.Status != metav1.ConditionTrue || hr.Status.ObservedGeneration != hr.Generation:
		return fmt.Errorf("HelmRelease %s is not ready: %s: %s", key, ready.Reason, ready.Message)
	}
	return nil
}

// DeployedAddon returns what helm-controller deployed as the add-on's
// release in namespace: the manifest Helm stored, and the live Deployment
// and Services it names, as the API server holds them.
func DeployedAddon(ctx context.Context, env *testenv.Env, namespace string) (*AddonChart, error) {
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		return nil, err
	}
	rls, err := storage.Init(driver.NewSecrets(cs.CoreV1().Secrets(namespace))).Deployed(AddonReleaseName)
	if err != nil {
		return nil, fmt.Errorf("failed to read the deployed release %s/%s: %w", namespace, AddonReleaseName, err)
	}
	r, ok := rls.(*helmv1.Release)
	if !ok {
		return nil, fmt.Errorf("release %s/%s is a %T", namespace, AddonReleaseName, rls)
	}
	out, err := parseAddonManifest(namespace, r.Manifest)
	if err != nil {
		return nil, err
	}
	live := &appsv1.Deployment{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(out.Deployment), live); err != nil {
		return nil, fmt.Errorf("failed to read the Deployment helm-controller applied: %w", err)
	}
	out.Deployment = live
	for i := range out.Services {
		live := &corev1.Service{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(&out.Services[i]), live); err != nil {
			return nil, fmt.Errorf("failed to read the Service helm-controller applied: %w", err)
		}
		out.Services[i] = *live
	}
	return out, nil
}

// readFluxInstall reads the OCIRepository and the HelmRelease of fluxDir.
func readFluxInstall(dir string) (*unstructured.Unstructured, *helmv2.HelmRelease, error) {
	var repo unstructured.Unstructured
	if err := readYAML(filepath.Join(dir, "ocirepository.yaml"), &repo.Object); err != nil {
		return nil, nil, err
	}
	hr := &helmv2.HelmRelease{}
	if err := readYAML(filepath.Join(dir, "helmrelease.yaml"), hr); err != nil {
		return nil, nil, err
	}
	return &repo, hr, nil
}

// readYAML decodes one YAML file strictly.
func readYAML(path string, into any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := yaml.UnmarshalStrict(data, into); err != nil {
		return fmt.Errorf("failed to decode %s: %w", path, err)
	}
	return nil
}
