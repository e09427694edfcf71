package framework

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clusterctl "sigs.k8s.io/cluster-api/cmd/clusterctl/client"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/templatedrift/template-drift-controller/api"
)

// providers is the inventory `clusterctl init` leaves; move checks both
// sides have it and that the target is not older than the source.
var providers = []struct{ namespace, name, typ, version string }{
	{"capi-system", "cluster-api", "CoreProvider", "v1.14.2"},
	{"capi-kubeadm-bootstrap-system", "bootstrap-kubeadm", "BootstrapProvider", "v1.14.2"},
	{"capi-kubeadm-control-plane-system", "control-plane-kubeadm", "ControlPlaneProvider", "v1.14.2"},
	{"capm3-system", "infrastructure-metal3", "InfrastructureProvider", "v1.12.7"},
}

// InstallProviders creates the clusterctl provider inventory.
func InstallProviders(ctx context.Context, c client.Client) error {
	for _, p := range providers {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: p.namespace}}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
		u := &unstructured.Unstructured{}
		err := yaml.Unmarshal([]byte(fmt.Sprintf(`
apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3
kind: Provider
metadata:
  name: %s
  namespace: %s
  labels: {clusterctl.cluster.x-k8s.io: "", clusterctl.cluster.x-k8s.io/core: inventory, cluster.x-k8s.io/provider: %s}
providerName: %s
type: %s
version: %s
`, p.name, p.namespace, p.name, p.name, p.typ, p.version)), &u.Object)
		if err != nil {
			return err
		}
		if err := c.Create(ctx, u); err != nil {
			return fmt.Errorf("failed to create provider %s: %w", p.name, err)
		}
	}
	return nil
}

// PlayCAPI does what Cluster API's controllers would have done by the time
// of a pivot, since none run here: the Cluster is provisioned and
// initialised, and every object of the release is owned by the Cluster, so
// `clusterctl move` finds it.
func PlayCAPI(ctx context.Context, c client.Client, namespace, cluster string) error {
	cl := &unstructured.Unstructured{}
	cl.SetAPIVersion("cluster.x-k8s.io/v1beta2")
	cl.SetKind("Cluster")
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: cluster}, cl); err != nil {
		return err
	}
	base := cl.DeepCopy()
	_ = unstructured.SetNestedMap(cl.Object, map[string]any{"infrastructureProvisioned": true, "controlPlaneInitialized": true}, "status", "initialization")
	_ = unstructured.SetNestedSlice(cl.Object, []any{map[string]any{
		"type": "ControlPlaneInitialized", "status": "True", "reason": "Initialized", "message": "",
		"lastTransitionTime": metav1.Now().UTC().Format("2006-01-02T15:04:05Z"), "observedGeneration": cl.GetGeneration(),
	}}, "status", "conditions")
	if err := c.Status().Patch(ctx, cl, client.MergeFrom(base)); err != nil {
		return fmt.Errorf("failed to set Cluster status: %w", err)
	}
	owner := metav1.OwnerReference{APIVersion: "cluster.x-k8s.io/v1beta2", Kind: "Cluster", Name: cluster, UID: cl.GetUID()}
	for _, gvk := range releaseKinds {
		list := &unstructured.UnstructuredList{}
		list.SetAPIVersion(gvk[0])
		list.SetKind(gvk[1] + "List")
		if err := c.List(ctx, list, client.InNamespace(namespace)); err != nil {
			return err
		}
		for i := range list.Items {
			o := &list.Items[i]
			if o.GetAnnotations()[api.HelmReleaseNameAnnotation] == "" {
				continue
			}
			base := o.DeepCopy()
			o.SetOwnerReferences([]metav1.OwnerReference{owner})
			if err := c.Patch(ctx, o, client.MergeFrom(base)); err != nil {
				return fmt.Errorf("failed to own %s %s: %w", o.GetKind(), o.GetName(), err)
			}
		}
	}
	return nil
}

// releaseKinds are the kinds the e2e chart renders, besides the Cluster.
var releaseKinds = [][2]string{
	{"infrastructure.cluster.x-k8s.io/v1beta1", "Metal3Cluster"},
	{"infrastructure.cluster.x-k8s.io/v1beta1", "Metal3MachineTemplate"},
	{"infrastructure.cluster.x-k8s.io/v1beta1", "Metal3DataTemplate"},
	{"bootstrap.cluster.x-k8s.io/v1beta2", "KubeadmConfigTemplate"},
	{"controlplane.cluster.x-k8s.io/v1beta2", "KubeadmControlPlane"},
	{"cluster.x-k8s.io/v1beta2", "MachineDeployment"},
}

// Move runs `clusterctl move` with the clusterctl client library.
func Move(ctx context.Context, fromKubeconfig, toKubeconfig, namespace string) error {
	c, err := clusterctl.New(ctx, "")
	if err != nil {
		return fmt.Errorf("failed to create clusterctl client: %w", err)
	}
	return c.Move(ctx, clusterctl.MoveOptions{
		FromKubeconfig: clusterctl.Kubeconfig{Path: fromKubeconfig},
		ToKubeconfig:   clusterctl.Kubeconfig{Path: toKubeconfig},
		Namespace:      namespace,
	})
}
