package framework

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/kustomize"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/internal/testenv"
)

// ClusterValues are the e2e chart's values.
type ClusterValues struct {
	ImageURL, ImageServerIP string
	KubeletMaxPods          string
	// KubernetesVersion, when set, overrides the valuesFrom ConfigMap's.
	KubernetesVersion string
	// LockedPool adds the pool on a locked machine template.
	LockedPool bool
}

func (v ClusterValues) json() *apiextensionsv1.JSON {
	m := map[string]any{"imageURL": v.ImageURL, "imageServerIP": v.ImageServerIP}
	if v.KubeletMaxPods != "" {
		m["kubeletArgs"] = map[string]any{"max-pods": v.KubeletMaxPods}
	}
	if v.KubernetesVersion != "" {
		m["kubernetesVersion"] = v.KubernetesVersion
	}
	if v.LockedPool {
		m["lockedPool"] = true
	}
	b, _ := json.Marshal(m)
	return &apiextensionsv1.JSON{Raw: b}
}

// CreateHelmRepository creates the HelmRepository "charts" for url.
func CreateHelmRepository(ctx context.Context, c client.Client, namespace, url string) error {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "HelmRepository",
		"metadata": map[string]any{"name": "charts", "namespace": namespace},
		"spec":     map[string]any{"url": url, "interval": "1m"},
	}}
	return c.Create(ctx, u)
}

// NewClusterHelmRelease returns the `cluster` HelmRelease of the e2e chart.
// ssa false pins client-side apply for install and upgrade, as a release
// first installed by Helm 3 behaves.
func NewClusterHelmRelease(namespace string, v ClusterValues, ssa bool) *helmv2.HelmRelease {
	hr := testenv.NewHelmRelease(namespace, "cluster", nil)
	hr.Spec.Chart.Spec.Version = "1.0.0"
	hr.Spec.Values = v.json()
	hr.Spec.Install = &helmv2.Install{ServerSideApply: ptr.To(ssa)}
	mode := helmv2.ServerSideApplyDisabled
	if ssa {
		mode = helmv2.ServerSideApplyEnabled
	}
	hr.Spec.Upgrade = &helmv2.Upgrade{ServerSideApply: mode}
	// Values composed as users compose them: a ConfigMap's values file, one
	// of its keys at a target path, an optional Secret that does not
	// exist, then spec.values over them; and a kustomize post-renderer.
	// The preview must render them as helm-controller does.
	hr.Spec.ValuesFrom = []helmv2.ValuesReference{
		{Kind: "ConfigMap", Name: ValuesConfigMap},
		{Kind: "ConfigMap", Name: ValuesConfigMap, ValuesKey: "version", TargetPath: "kubernetesVersion"},
		{Kind: "Secret", Name: "cluster-values-not-there", Optional: true},
	}
	hr.Spec.PostRenderers = []helmv2.PostRenderer{{Kustomize: &helmv2.Kustomize{Patches: []kustomize.Patch{{
		Target: &kustomize.Selector{Kind: "MachineDeployment"},
		Patch:  `[{"op": "add", "path": "/metadata/annotations", "value": {"e2e.templatedrift.io/post-rendered": "yes"}}]`,
	}}}}}
	return hr
}

// ValuesConfigMap is the ConfigMap the cluster HelmRelease takes values
// from (CreateValuesConfigMap).
const ValuesConfigMap = "cluster-values"

// CreateValuesConfigMap creates the ConfigMap NewClusterHelmRelease's
// valuesFrom reads: the chart's own defaults, so the values it gives are
// the ones spec.values alone would give.
func CreateValuesConfigMap(ctx context.Context, c client.Client, namespace string) error {
	return c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: ValuesConfigMap, Namespace: namespace},
		Data: map[string]string{"values.yaml": "cluster: mgmt\n", "version": "v1.33.4"}})
}

// SetValues updates the HelmRelease's values (an upgrade).
func SetValues(ctx context.Context, c client.Client, key client.ObjectKey, v ClusterValues) error {
	hr := &helmv2.HelmRelease{}
	if err := c.Get(ctx, key, hr); err != nil {
		return err
	}
	base := hr.DeepCopy()
	hr.Spec.Values = v.json()
	return c.Patch(ctx, hr, client.MergeFrom(base))
}

// Condition returns a condition of the HelmRelease, or nil.
func Condition(ctx context.Context, c client.Client, key client.ObjectKey, typ string) (*metav1.Condition, *helmv2.HelmRelease, error) {
	hr := &helmv2.HelmRelease{}
	if err := c.Get(ctx, key, hr); err != nil {
		return nil, nil, err
	}
	return apimeta.FindStatusCondition(hr.Status.Conditions, typ), hr, nil
}

// Get reads one object.
func Get(ctx context.Context, c client.Client, apiVersion, kind, namespace, name string) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	return u, c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, u)
}

// List lists one kind in a namespace.
func List(ctx context.Context, c client.Client, apiVersion, kind, namespace string) ([]unstructured.Unstructured, error) {
	l := &unstructured.UnstructuredList{}
	l.SetAPIVersion(apiVersion)
	l.SetKind(kind + "List")
	err := c.List(ctx, l, client.InNamespace(namespace))
	return l.Items, err
}

// FluxCLI runs the real flux CLI against a kubeconfig.
func FluxCLI(ctx context.Context, bin, kubeconfig string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append(args, "--kubeconfig", kubeconfig)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("flux %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}
