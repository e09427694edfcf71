package testenv_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/internal/testenv"
)

// TestManagedControlPlane proves that a control plane started with
// Options.Managers behaves as a management cluster with Cluster API v1.14
// and CAPM3 v1.13 installed: conversion through the providers' webhooks
// (and the values it does not keep), their real locks and finalizers, and
// the MachineDeployment controller creating MachineSets. The controller's
// tests rely on each of these.
func TestManagedControlPlane(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	env, err := testenv.StartWith("managed", testenv.Options{Managers: true})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { g.Expect(env.Stop()).To(Succeed()) })
	c := env.Client
	for _, o := range managedCluster(t) {
		g.Expect(c.Create(ctx, o)).To(Succeed(), "create %s %s", o.GetKind(), o.GetName())
	}

	t.Run("every manager's webhook server listens on loopback only", func(t *testing.T) {
		g := NewWithT(t)
		g.Expect(env.WebhookPorts()).To(HaveLen(4))
		for name, port := range env.WebhookPorts() {
			g.Expect(listenAddrs(t, port)).To(ConsistOf("0100007F"), "%s listens on :%s", name, port)
		}
	})

	t.Run("CAPM3 lets Metal3MachineTemplate image.url change, and refuses an empty checksum", func(t *testing.T) {
		g := NewWithT(t)
		m3mt := obj(t, `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: Metal3MachineTemplate
metadata: {name: workers, namespace: default}
spec:
  template:
    spec:
      image: {url: "http://10.10.10.17/images/ubuntu.qcow2", checksum: "http://10.10.10.17/images/ubuntu.qcow2.sha256sum", format: qcow2}
      dataTemplate: {name: workers-metadata}
`)
		g.Expect(c.Create(ctx, m3mt)).To(Succeed())
		g.Expect(unstructured.SetNestedField(m3mt.Object, "http://192.168.100.2/images/ubuntu.qcow2", "spec", "template", "spec", "image", "url")).To(Succeed())
		g.Expect(c.Update(ctx, m3mt)).To(Succeed())

		bad := m3mt.DeepCopy()
		g.Expect(unstructured.SetNestedField(bad.Object, "", "spec", "template", "spec", "image", "checksum")).To(Succeed())
		err := c.Update(ctx, bad)
		g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "a missing checksum must be refused: %v", err)
	})

	t.Run("CAPM3 conversion drops routes prefix 0 and the webhook locks metaData", func(t *testing.T) {
		g := NewWithT(t)
		m3dt := obj(t, `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: Metal3DataTemplate
metadata: {name: m3dt-prefix, namespace: default}
spec:
  clusterName: probe
  metaData:
    strings: [{key: image-server, value: 10.10.10.17}]
  networkData:
    networks:
      ipv4:
      - id: provisioning
        link: eth0
        ipAddressFromIPPool: pool
        routes:
        - {network: 0.0.0.0, prefix: 0, gateway: {fromIPPool: pool}}
`)
		g.Expect(c.Create(ctx, m3dt)).To(Succeed())
		back := get(ctx, g, c, m3dt)
		route, _, _ := unstructured.NestedSlice(back.Object, "spec", "networkData", "networks", "ipv4")
		g.Expect(route).To(HaveLen(1))
		routes, _, _ := unstructured.NestedSlice(route[0].(map[string]any), "routes")
		g.Expect(routes).To(HaveLen(1))
		g.Expect(routes[0]).NotTo(HaveKey("prefix"), "CAPM3 v1.13's v1beta1<->v1beta2 round trip drops prefix: 0")

		patch := []byte(`[{"op":"replace","path":"/spec/metaData/strings/0/value","value":"192.168.100.2"}]`)
		err := c.Patch(ctx, back, client.RawPatch(types.JSONPatchType, patch))
		g.Expect(err).To(MatchError(ContainSubstring("cannot be modified")), "CAPM3's webhook locks metaData")

		// Within CAPM3's resync (30 s here): its first reconcile may run
		// before its cache holds the Cluster, and then it does nothing.
		g.Eventually(func() []string { return get(ctx, g, c, m3dt).GetFinalizers() }, 90*time.Second, 200*time.Millisecond).
			ShouldNot(BeEmpty(), "CAPM3 puts its finalizer on every Metal3DataTemplate")
	})

	t.Run("Cluster API conversion re-encodes KubeadmConfigTemplate durations and drops empty values", func(t *testing.T) {
		g := NewWithT(t)
		kct := obj(t, `
apiVersion: bootstrap.cluster.x-k8s.io/v1beta1
kind: KubeadmConfigTemplate
metadata: {name: kct-durations, namespace: default}
spec:
  template:
    spec:
      clusterConfiguration:
        apiVersion: ""
      joinConfiguration:
        discovery:
          timeout: 5m
      preKubeadmCommands: []
      files: [{path: /etc/motd, content: hello}]
`)
		g.Expect(c.Create(ctx, kct)).To(Succeed())
		back := get(ctx, g, c, kct)
		timeout, _, _ := unstructured.NestedString(back.Object, "spec", "template", "spec", "joinConfiguration", "discovery", "timeout")
		g.Expect(timeout).To(Equal("5m0s"))
		spec, _, _ := unstructured.NestedMap(back.Object, "spec", "template", "spec")
		g.Expect(spec).NotTo(HaveKey("preKubeadmCommands"), "an empty list does not come back")
		files, _, _ := unstructured.NestedSlice(spec, "files")
		g.Expect(files).To(HaveLen(1))
		t.Logf("read back: %v", spec)
		g.Expect(spec).NotTo(HaveKey("clusterConfiguration"), "an empty string does not come back")
	})

	t.Run("the MachineDeployment controller creates a MachineSet", func(t *testing.T) {
		g := NewWithT(t)
		g.Eventually(func() int {
			l := &unstructured.UnstructuredList{}
			l.SetAPIVersion("cluster.x-k8s.io/v1beta2")
			l.SetKind("MachineSetList")
			g.Expect(c.List(ctx, l, client.InNamespace("default"), client.MatchingLabels{"cluster.x-k8s.io/deployment-name": "md-probe"})).To(Succeed())
			return len(l.Items)
		}, 60*time.Second, 250*time.Millisecond).Should(Equal(1))
	})
}

// listenAddrs returns the local addresses (hex, as /proc/net/tcp{,6} shows
// them) of the sockets listening on port: 0100007F is 127.0.0.1, all zeros
// is every interface.
func listenAddrs(t *testing.T, port string) []string {
	p, err := strconv.Atoi(port)
	if err != nil {
		t.Fatalf("bad port %q", port)
	}
	want := fmt.Sprintf(":%04X", p)
	var out []string
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n")[1:] {
			fields := strings.Fields(line)
			// fields[1] is local address:port, fields[3] the state (0A: LISTEN).
			if len(fields) > 3 && fields[3] == "0A" && strings.HasSuffix(fields[1], want) {
				out = append(out, strings.TrimSuffix(fields[1], want))
			}
		}
	}
	return out
}

func get(ctx context.Context, g Gomega, c client.Client, o *unstructured.Unstructured) *unstructured.Unstructured {
	back := &unstructured.Unstructured{}
	back.SetGroupVersionKind(o.GroupVersionKind())
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(o), back)).To(Succeed())
	return back
}

// managedCluster is a minimal Metal3 cluster: a Cluster whose
// Metal3Cluster has a loopback control-plane endpoint on which nothing listens (Cluster API's
// managers may dial it, and tests send traffic to loopback only), and a
// MachineDeployment cloning from a Metal3MachineTemplate.
func managedCluster(t *testing.T) []*unstructured.Unstructured {
	return []*unstructured.Unstructured{obj(t, `
apiVersion: cluster.x-k8s.io/v1beta2
kind: Cluster
metadata: {name: probe, namespace: default}
spec:
  infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: Metal3Cluster, name: probe}
`), obj(t, `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: Metal3Cluster
metadata: {name: probe, namespace: default}
spec:
  controlPlaneEndpoint: {host: 127.0.0.1, port: 9}
`), obj(t, `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: Metal3MachineTemplate
metadata: {name: md-probe, namespace: default}
spec:
  template:
    spec:
      image: {url: "http://127.0.0.1/i.qcow2", checksum: "http://127.0.0.1/i.qcow2.sha256sum", checksumType: sha256, format: qcow2}
`), obj(t, `
apiVersion: bootstrap.cluster.x-k8s.io/v1beta2
kind: KubeadmConfigTemplate
metadata: {name: md-probe, namespace: default}
spec:
  template:
    spec:
      files: [{path: /etc/motd, content: hello}]
`), obj(t, `
apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineDeployment
metadata: {name: md-probe, namespace: default}
spec:
  clusterName: probe
  replicas: 1
  selector: {matchLabels: {}}
  template:
    spec:
      clusterName: probe
      version: v1.33.4
      bootstrap:
        configRef: {apiGroup: bootstrap.cluster.x-k8s.io, kind: KubeadmConfigTemplate, name: md-probe}
      infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: Metal3MachineTemplate, name: md-probe}
`)}
}
