package framework

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	chartcommon "helm.sh/helm/v4/pkg/chart/common"
	chartutil "helm.sh/helm/v4/pkg/chart/common/util"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/engine"
	"helm.sh/helm/v4/pkg/kube"
	"helm.sh/helm/v4/pkg/release/common"
	helmv1 "helm.sh/helm/v4/pkg/release/v1"
	releaseutil "helm.sh/helm/v4/pkg/release/v1/util"
	"helm.sh/helm/v4/pkg/storage"
	"helm.sh/helm/v4/pkg/storage/driver"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/resource"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/templatedrift/template-drift-controller/internal/testenv"
)

// AddonReleaseName is the release name the e2e suite installs the add-on's
// chart as: the one the README's `helm install` uses.
const AddonReleaseName = "template-drift-controller"

// AddonChart is the add-on's chart as installed on a control plane, and
// what it rendered that the suite runs.
type AddonChart struct {
	// Namespace is the release namespace.
	Namespace string
	// Manifest is the rendered manifest Helm applied.
	Manifest string
	// Deployment is the rendered controller Deployment.
	Deployment *appsv1.Deployment
	// Services are the rendered Services.
	Services []corev1.Service
}

// InstallAddonChart installs the chart in chartDir into namespace of env
// with values, as a cluster admin's `helm install` does with Helm v4: the
// values checked against the chart's schema, the chart rendered for the
// API server's version, the manifest sorted in Helm's install order and
// validated against the server's OpenAPI schema, the objects created with
// server-side apply and Helm's ownership metadata, and the release stored
// as deployed in a Secret. It does not wait for the Deployment, whose Pods
// no kubelet runs here. It uses the Helm v4 packages that action.Install
// uses rather than pkg/action itself, which would bring the OCI registry
// and plugin runtime into go.mod for a chart that has no hooks.
func InstallAddonChart(_ context.Context, env *testenv.Env, chartDir, namespace string, values map[string]any) (*AddonChart, error) {
	ch, err := loader.Load(chartDir)
	if err != nil {
		return nil, fmt.Errorf("failed to load chart %s: %w", chartDir, err)
	}
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		return nil, fmt.Errorf("failed to create clientset: %w", err)
	}
	manifest, err := renderForServer(cs, ch, namespace, values)
	if err != nil {
		return nil, err
	}
	// A discovery cache of its own: ~/.kube/cache is keyed by host:port,
	// which another control plane of the suite may have used before.
	cacheDir, err := os.MkdirTemp("", "tdc-e2e-helm-cache-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(cacheDir)
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig, flags.Namespace, flags.CacheDir = &env.KubeConfigPath, &namespace, &cacheDir
	kc := kube.New(flags)
	resources, err := kc.Build(strings.NewReader(manifest), true)
	if err != nil {
		return nil, fmt.Errorf("failed to build the chart's objects: %w", err)
	}
	if err := resources.Visit(helmOwnership(AddonReleaseName, namespace)); err != nil {
		return nil, err
	}
	if _, err := kc.Create(resources, kube.ClientCreateOptionServerSideApply(true, false)); err != nil {
		return nil, fmt.Errorf("failed to create the chart's objects: %w", err)
	}
	now := time.Now()
	rel := &helmv1.Release{Name: AddonReleaseName, Namespace: namespace, Version: 1, Chart: ch, Config: values,
		Manifest: manifest, ApplyMethod: "ssa",
		Info: &helmv1.Info{Status: common.StatusDeployed, FirstDeployed: now, LastDeployed: now, Description: "Install complete"}}
	if err := storage.Init(driver.NewSecrets(cs.CoreV1().Secrets(namespace))).Create(rel); err != nil {
		return nil, fmt.Errorf("failed to store the release: %w", err)
	}
	return parseAddonManifest(namespace, manifest)
}

// renderForServer renders ch as release AddonReleaseName in namespace for
// the API server cs talks to, and returns the manifest Helm would store:
// every template but NOTES.txt, in install order, with Source comments.
func renderForServer(cs kubernetes.Interface, ch *chart.Chart, namespace string, values map[string]any) (string, error) {
	version, err := cs.Discovery().ServerVersion()
	if err != nil {
		return "", fmt.Errorf("failed to read the server's version: %w", err)
	}
	caps := chartcommon.DefaultCapabilities.Copy()
	caps.KubeVersion = chartcommon.KubeVersion{Version: version.GitVersion, Major: version.Major, Minor: version.Minor}
	top, err := chartutil.ToRenderValuesWithSchemaValidation(ch, values, chartcommon.ReleaseOptions{
		Name: AddonReleaseName, Namespace: namespace, Revision: 1, IsInstall: true}, caps, false)
	if err != nil {
		return "", fmt.Errorf("failed to check the values: %w", err)
	}
	files, err := engine.Render(ch, top)
	if err != nil {
		return "", fmt.Errorf("failed to render the chart: %w", err)
	}
	for name := range files {
		if strings.HasSuffix(name, "NOTES.txt") {
			delete(files, name)
		}
	}
	hooks, manifests, err := releaseutil.SortManifests(files, caps.APIVersions, releaseutil.InstallOrder)
	if err != nil {
		return "", fmt.Errorf("failed to sort the rendered manifests: %w", err)
	}
	if len(hooks) > 0 {
		return "", fmt.Errorf("the chart renders %d hooks, which are not installed here", len(hooks))
	}
	var b strings.Builder
	for _, m := range manifests {
		fmt.Fprintf(&b, "---\n# Source: %s\n%s\n", m.Name, m.Content)
	}
	return b.String(), nil
}

// helmOwnership labels and annotates each object as Helm's install does,
// so that Helm (and helm-controller) see the release own it.
func helmOwnership(release, namespace string) resource.VisitorFunc {
	return func(info *resource.Info, err error) error {
		if err != nil {
			return err
		}
		obj, err := apimeta.Accessor(info.Object)
		if err != nil {
			return err
		}
		labels, annotations := obj.GetLabels(), obj.GetAnnotations()
		if labels == nil {
			labels = map[string]string{}
		}
		if annotations == nil {
			annotations = map[string]string{}
		}
		labels["app.kubernetes.io/managed-by"] = "Helm"
		annotations["meta.helm.sh/release-name"], annotations["meta.helm.sh/release-namespace"] = release, namespace
		obj.SetLabels(labels)
		obj.SetAnnotations(annotations)
		return nil
	}
}

// parseAddonManifest finds the one Deployment and the Services in a
// rendered manifest.
func parseAddonManifest(namespace, manifest string) (*AddonChart, error) {
	out := &AddonChart{Namespace: namespace, Manifest: manifest}
	r := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(manifest)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("failed to split the rendered manifest: %w", err)
		}
		var head struct{ Kind string }
		if err := yaml.Unmarshal(doc, &head); err != nil {
			return nil, fmt.Errorf("failed to parse the rendered manifest: %w", err)
		}
		switch head.Kind {
		case "Deployment":
			if out.Deployment != nil {
				return nil, errors.New("the chart rendered more than one Deployment; run one instance (no sharding.shards)")
			}
			out.Deployment = &appsv1.Deployment{}
			if err := yaml.UnmarshalStrict(doc, out.Deployment); err != nil {
				return nil, fmt.Errorf("failed to parse the rendered Deployment: %w", err)
			}
		case "Service":
			var s corev1.Service
			if err := yaml.UnmarshalStrict(doc, &s); err != nil {
				return nil, fmt.Errorf("failed to parse a rendered Service: %w", err)
			}
			out.Services = append(out.Services, s)
		}
	}
	if out.Deployment == nil {
		return nil, errors.New("the chart rendered no Deployment")
	}
	return out, nil
}
