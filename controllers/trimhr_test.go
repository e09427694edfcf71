package controllers

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/release"
)

// TestTrimHelmRelease: the manager's cache keeps of a HelmRelease what a
// pass reads (its metadata, the spec fields that name its release, storage
// and identity, drift detection, suspension, its status) and drops its
// values, post-renderers and managedFields; other objects lose only their
// managedFields.
func TestTrimHelmRelease(t *testing.T) {
	g := NewWithT(t)
	hr := &helmv2.HelmRelease{
		ObjectMeta: metav1.ObjectMeta{Name: "cluster", Namespace: "fleet", Generation: 3, ResourceVersion: "9",
			Annotations:   map[string]string{api.ModeAnnotation: api.ModeEnabled},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "flux"}}},
		Spec: helmv2.HelmReleaseSpec{ReleaseName: "mgmt", TargetNamespace: "capi", StorageNamespace: "flux-system",
			ServiceAccountName: "tenant", Suspend: true,
			DriftDetection: &helmv2.DriftDetection{Mode: helmv2.DriftDetectionWarn},
			Values:         &apiextensionsv1.JSON{Raw: []byte(`{"cluster":{"name":"mgmt"}}`)},
			PostRenderers:  []helmv2.PostRenderer{{Kustomize: &helmv2.Kustomize{}}}},
		Status: helmv2.HelmReleaseStatus{History: helmv2.Snapshots{{Name: "mgmt", Version: 2, Digest: "sha256:abc"}},
			Conditions: []metav1.Condition{{Type: api.TemplatesInSyncCondition, Status: metav1.ConditionTrue}}},
	}
	want := hr.DeepCopy()
	want.ManagedFields, want.Spec.Values, want.Spec.PostRenderers = nil, nil, nil

	out, err := TrimHelmRelease()(hr)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(Equal(want))
	g.Expect(release.Name(out.(*helmv2.HelmRelease))).To(Equal("mgmt"))

	other := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "x", ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m"}}}}
	out, err = TrimHelmRelease()(other)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out.(*metav1.PartialObjectMetadata).ManagedFields).To(BeEmpty())
	g.Expect(out.(*metav1.PartialObjectMetadata).Name).To(Equal("x"))
}

// BenchmarkHelmReleaseCache: the heap a cache of 1,000 HelmReleases holds,
// each with a cluster chart's values (about 16 KiB of JSON: a cluster of
// a few node pools, as Sylva's cluster charts take), decoded as the
// informer decodes them, kept whole and trimmed (TrimHelmRelease). Run
// with -benchtime=1x; it reports MiB/1000HR.
func BenchmarkHelmReleaseCache(b *testing.B) {
	values := clusterValues(b)
	for _, bc := range []struct {
		name string
		trim bool
	}{{"kept", false}, {"trimmed", true}} {
		b.Run(bc.name, func(b *testing.B) {
			for range b.N {
				b.ReportMetric(cacheHeap(b, values, bc.trim)/(1<<20), "MiB/1000HR")
			}
		})
	}
}

// cacheHeap decodes 1,000 HelmReleases with values, trimmed or not, and
// returns the heap they hold.
func cacheHeap(b *testing.B, values []byte, trim bool) float64 {
	b.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	cache := make([]*helmv2.HelmRelease, 1000)
	for i := range cache {
		hr := &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Name: "cluster", Namespace: fmt.Sprintf("fleet-%04d", i)},
			Spec: helmv2.HelmReleaseSpec{Values: &apiextensionsv1.JSON{Raw: values}}}
		raw, err := json.Marshal(hr)
		if err != nil {
			b.Fatal(err)
		}
		decoded := &helmv2.HelmRelease{}
		if err := json.Unmarshal(raw, decoded); err != nil {
			b.Fatal(err)
		}
		if trim {
			if _, err := TrimHelmRelease()(decoded); err != nil {
				b.Fatal(err)
			}
		}
		cache[i] = decoded
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(cache)
	return float64(after.HeapAlloc) - float64(before.HeapAlloc)
}

// clusterValues are a cluster chart's values: the cluster, and node pools
// with their machine, image, network and kubeadm settings.
func clusterValues(b *testing.B) []byte {
	b.Helper()
	pools := map[string]any{}
	for i := range 6 {
		pools[fmt.Sprintf("md%d", i)] = map[string]any{
			"replicas": 3, "failureDomain": fmt.Sprintf("rack-%d", i),
			"infra": map[string]any{
				"image":        map[string]any{"url": "http://192.168.100.2/images/ubuntu-22.04-plain-rke2-1-28-8.qcow2", "checksum": "http://192.168.100.2/images/ubuntu-22.04-plain-rke2-1-28-8.qcow2.sha256sum", "checksumType": "sha256", "format": "qcow2"},
				"hostSelector": map[string]any{"matchLabels": map[string]any{"cluster-role": "worker", "pool": fmt.Sprintf("md%d", i)}},
				"networks": []any{
					map[string]any{"id": "provisioning", "type": "ipv4", "link": "eno1", "ipAddressFromIPPool": "provisioning-pool", "routes": []any{map[string]any{"network": "0.0.0.0", "prefix": 0, "gateway": "192.168.100.1"}}},
					map[string]any{"id": "storage", "type": "ipv4", "link": "eno2", "ipAddressFromIPPool": "storage-pool", "mtu": 9000},
				},
			},
			"kubeadm": map[string]any{
				"preKubeadmCommands":  []any{"systemctl enable --now containerd", "modprobe br_netfilter", "sysctl -w net.ipv4.ip_forward=1", "echo 'fs.inotify.max_user_instances=8192' >> /etc/sysctl.d/99-k8s.conf"},
				"postKubeadmCommands": []any{"systemctl restart kubelet", "touch /var/lib/node-ready"},
				"kubeletExtraArgs":    map[string]any{"max-pods": "110", "node-labels": fmt.Sprintf("pool=md%d,rack=rack-%d", i, i), "cgroup-driver": "systemd", "eviction-hard": "memory.available<500Mi,nodefs.available<10%"},
				"files":               []any{map[string]any{"path": "/etc/containerd/config.d/registry.toml", "owner": "root:root", "permissions": "0644", "content": strings.Repeat("[plugins.\"io.containerd.grpc.v1.cri\".registry.mirrors.\"docker.io\"]\n  endpoint = [\"https://registry.mgmt.example:5000\"]\n", 6)}},
			},
		}
	}
	v := map[string]any{
		"cluster": map[string]any{"name": "mgmt", "kubernetesVersion": "v1.28.8", "controlPlaneEndpoint": map[string]any{"host": "192.168.100.10", "port": 6443},
			"network": map[string]any{"pods": "10.244.0.0/16", "services": "10.96.0.0/12", "dnsDomain": "cluster.local"}},
		"controlPlane":       map[string]any{"replicas": 3, "rolloutStrategy": map[string]any{"type": "RollingUpdate", "maxSurge": 0}},
		"machineDeployments": pools,
		"proxies":            map[string]any{"http": "http://proxy.example:3128", "https": "http://proxy.example:3128", "noProxy": "127.0.0.1,localhost,.svc,.cluster.local,192.168.100.0/24"},
	}
	raw, err := json.Marshal(v)
	if err != nil {
		b.Fatal(err)
	}
	return raw
}
