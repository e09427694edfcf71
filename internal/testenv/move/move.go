// Package move plays what a pivot needs with the real Cluster API and
// Metal3 managers, and runs `clusterctl move` with the clusterctl client
// library: the provider inventory `clusterctl init` leaves, the
// provisioning a host's join would bring, and the move itself. The e2e
// suite and the integration tests share it.
package move

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	clusterctl "sigs.k8s.io/cluster-api/cmd/clusterctl/client"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// providers is the inventory `clusterctl init` leaves; move checks both
// sides have it and that the target is not older than the source.
var providers = []struct{ namespace, name, typ, version string }{
	{"capi-system", "cluster-api", "CoreProvider", "v1.14.2"},
	{"capi-kubeadm-bootstrap-system", "bootstrap-kubeadm", "BootstrapProvider", "v1.14.2"},
	{"capi-kubeadm-control-plane-system", "control-plane-kubeadm", "ControlPlaneProvider", "v1.14.2"},
	{"capm3-system", "infrastructure-metal3", "InfrastructureProvider", "v1.13.2"},
}

// InstallProviders creates the clusterctl provider inventory, or leaves
// it as it is.
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
		if err := c.Create(ctx, u); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("failed to create provider %s: %w", p.name, err)
		}
	}
	return nil
}

// PlayProvisioning brings the cluster to where `clusterctl move` may pivot
// it. The real Cluster API and Metal3 managers run on the control plane and
// have done their part once every object of the release is owned by the
// Cluster (the Cluster, MachineDeployment and KubeadmControlPlane
// controllers, and CAPM3 for Metal3DataTemplates, add those references) and
// CAPM3 holds every Metal3DataTemplate with its finalizer. The Cluster
// controller then marks the infrastructure provisioned from the
// Metal3Cluster. What cannot happen here is a host joining: there is no
// Ironic and no workload cluster. So the status that the first join would
// bring is written by hand: the KubeadmControlPlane's
// status.initialization.controlPlaneInitialized (the KCP controller only
// ever sets it to true, and the Cluster controller derives the Cluster's
// ControlPlaneInitialized from it, once and for good) and a nodeRef on
// every Machine. It returns once the Cluster controller reports the
// Cluster provisioned and its control plane initialised.
func PlayProvisioning(ctx context.Context, c client.Client, namespace, cluster string) error {
	cl, err := waitOwned(ctx, c, namespace, cluster)
	if err != nil {
		return err
	}
	cpName, _, _ := unstructured.NestedString(cl.Object, "spec", "controlPlaneRef", "name")
	kcp, err := get(ctx, c, "controlplane.cluster.x-k8s.io/v1beta2", "KubeadmControlPlane", namespace, cpName)
	if err != nil {
		return err
	}
	base := kcp.DeepCopy()
	_ = unstructured.SetNestedField(kcp.Object, true, "status", "initialization", "controlPlaneInitialized")
	if err := c.Status().Patch(ctx, kcp, client.MergeFrom(base)); err != nil {
		return fmt.Errorf("failed to mark KubeadmControlPlane %s initialised: %w", cpName, err)
	}
	var last string
	err = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(cl), cl); err != nil {
			return false, err
		}
		infra, _, _ := unstructured.NestedBool(cl.Object, "status", "initialization", "infrastructureProvisioned")
		conds, _, _ := unstructured.NestedSlice(cl.Object, "status", "conditions")
		last = fmt.Sprintf("infrastructureProvisioned=%v, conditions %v", infra, conds)
		return infra && conditionTrue(conds, "ControlPlaneInitialized"), nil
	})
	if err != nil {
		return fmt.Errorf("the Cluster controller did not report Cluster %s provisioned (%s): %w", cluster, last, err)
	}
	if err := GiveMachinesClaims(ctx, c, namespace); err != nil {
		return err
	}
	return GiveMachinesNodes(ctx, c, namespace)
}

// GiveMachinesClaims gives every Metal3Machine the Metal3DataClaim CAPM3
// makes for it once its host is associated: one claim, owned by the
// Metal3Machine, naming the Metal3DataTemplate of its machine template.
// There are no hosts here, so CAPM3 never makes them; a live cluster has
// them, and they hold the data templates in use (CAPM3's finalizer). The
// claims move with their Metal3Machines.
func GiveMachinesClaims(ctx context.Context, c client.Client, namespace string) error {
	m3ms, err := list(ctx, c, "infrastructure.cluster.x-k8s.io/v1beta1", "Metal3Machine", namespace)
	if err != nil {
		return err
	}
	for i := range m3ms {
		m := &m3ms[i]
		template, _, _ := unstructured.NestedString(m.Object, "spec", "dataTemplate", "name")
		if template == "" {
			continue
		}
		claim := &unstructured.Unstructured{}
		claim.SetAPIVersion("infrastructure.cluster.x-k8s.io/v1beta1")
		claim.SetKind("Metal3DataClaim")
		claim.SetNamespace(namespace)
		claim.SetName(m.GetName())
		claim.SetLabels(map[string]string{"cluster.x-k8s.io/cluster-name": m.GetLabels()["cluster.x-k8s.io/cluster-name"]})
		claim.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: m.GetAPIVersion(), Kind: m.GetKind(), Name: m.GetName(), UID: m.GetUID(), Controller: ptrTrue()}})
		_ = unstructured.SetNestedField(claim.Object, template, "spec", "template", "name")
		if err := c.Create(ctx, claim); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("failed to give Metal3Machine %s its Metal3DataClaim: %w", m.GetName(), err)
		}
	}
	return nil
}

func ptrTrue() *bool {
	t := true
	return &t
}

func conditionTrue(conds []any, typ string) bool {
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == typ && m["status"] == "True" {
			return true
		}
	}
	return false
}

// waitOwned waits until the real controllers have adopted every object of
// the release for the Cluster, and CAPM3 has put its finalizer on every
// Metal3DataTemplate; it returns the Cluster.
func waitOwned(ctx context.Context, c client.Client, namespace, cluster string) (*unstructured.Unstructured, error) {
	cl := &unstructured.Unstructured{}
	cl.SetAPIVersion("cluster.x-k8s.io/v1beta2")
	cl.SetKind("Cluster")
	var pending string
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: cluster}, cl); err != nil {
			return false, err
		}
		pending = ""
		for _, gvk := range releaseKinds {
			items, err := list(ctx, c, gvk[0], gvk[1], namespace)
			if err != nil {
				return false, err
			}
			for i := range items {
				o := &items[i]
				switch {
				case !ownedBy(o, cl):
					pending = fmt.Sprintf("%s %s has no ownerReference to Cluster %s yet", o.GetKind(), o.GetName(), cluster)
					return false, nil
				case o.GetKind() == "Metal3DataTemplate" && len(o.GetFinalizers()) == 0:
					pending = fmt.Sprintf("Metal3DataTemplate %s has no finalizer yet", o.GetName())
					return false, nil
				}
			}
		}
		return true, nil
	})
	if err != nil {
		return nil, fmt.Errorf("the Cluster API and Metal3 controllers did not adopt the release's objects (%s): %w", pending, err)
	}
	return cl, nil
}

func ownedBy(o, cluster *unstructured.Unstructured) bool {
	for _, ref := range o.GetOwnerReferences() {
		if ref.Kind == "Cluster" && ref.UID == cluster.GetUID() {
			return true
		}
	}
	return false
}

// GiveMachinesNodes sets status.nodeRef on every Machine, as the Machine
// controller does once the host has joined the workload cluster; move
// refuses Machines without one.
func GiveMachinesNodes(ctx context.Context, c client.Client, namespace string) error {
	machines, err := list(ctx, c, "cluster.x-k8s.io/v1beta2", "Machine", namespace)
	if err != nil {
		return err
	}
	for i := range machines {
		m := &machines[i]
		base := m.DeepCopy()
		_ = unstructured.SetNestedField(m.Object, m.GetName(), "status", "nodeRef", "name")
		if err := c.Status().Patch(ctx, m, client.MergeFrom(base)); err != nil {
			return fmt.Errorf("failed to give Machine %s a node: %w", m.GetName(), err)
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

// get reads one object.
func get(ctx context.Context, c client.Client, apiVersion, kind, namespace, name string) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	return u, c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, u)
}

// list lists one kind in a namespace.
func list(ctx context.Context, c client.Client, apiVersion, kind, namespace string) ([]unstructured.Unstructured, error) {
	l := &unstructured.UnstructuredList{}
	l.SetAPIVersion(apiVersion)
	l.SetKind(kind + "List")
	err := c.List(ctx, l, client.InNamespace(namespace))
	return l.Items, err
}

// Run runs `clusterctl move` of namespace with the clusterctl client
// library.
func Run(ctx context.Context, fromKubeconfig, toKubeconfig, namespace string) error {
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

// RunProvisioned runs `clusterctl move` of namespace once every Machine
// has its claims and node. The KubeadmControlPlane and MachineSet
// controllers keep creating Machines; one created after the nodeRefs were
// written makes move refuse before it has changed anything ("still
// provisioning"), or a Machine deleted during its discovery makes it fail
// reading it. Either is answered by giving the Machines their claims and
// nodes and moving again, for up to a minute.
func RunProvisioned(ctx context.Context, c client.Client, fromKubeconfig, toKubeconfig, namespace string) error {
	deadline := time.Now().Add(time.Minute)
	for {
		if err := GiveMachinesClaims(ctx, c, namespace); err != nil {
			return err
		}
		if err := GiveMachinesNodes(ctx, c, namespace); err != nil {
			return err
		}
		err := Run(ctx, fromKubeconfig, toKubeconfig, namespace)
		if err == nil || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(2 * time.Second):
		}
	}
}
