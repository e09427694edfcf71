package release

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/release/common"
	helmv1 "helm.sh/helm/v4/pkg/release/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// benchRelease is a release of a 50-cluster-sized chart: 100 templates, each
// about 600 bytes of YAML, about 60 KB of manifest.
func benchRelease(b *testing.B) []byte {
	var m strings.Builder
	for i := 0; i < 100; i++ {
		fmt.Fprintf(&m, "---\n# Source: cluster/templates/m3mt.yaml\napiVersion: infrastructure.cluster.x-k8s.io/v1beta1\n"+
			"kind: Metal3MachineTemplate\nmetadata:\n  name: workers-%03d\nspec:\n  template:\n    spec:\n"+
			"      image: {url: http://192.168.100.2/images/ubuntu-%03d.qcow2, checksum: http://192.168.100.2/images/ubuntu.qcow2.sha256sum, checksumType: sha256, format: qcow2}\n"+
			"      dataTemplate: {name: workers-%03d-metadata}\n      hostSelector: {matchLabels: {pool: workers, rack: r%02d}}\n", i, i, i, i%8)
	}
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	rel := &helmv1.Release{Name: "cluster", Namespace: "fleet", Version: 1, Manifest: m.String(), ApplyMethod: "ssa",
		Info:  &helmv1.Info{Status: common.StatusDeployed, FirstDeployed: now, LastDeployed: now},
		Chart: &chart.Chart{Metadata: &chart.Metadata{Name: "cluster", Version: "1.0.0"}},
	}
	data, err := json.Marshal(rel)
	if err != nil {
		b.Fatal(err)
	}
	return helmEncode(b, data)
}

// BenchmarkGet compares a release read that decodes the Secret (a changed
// release) with one served from the memo (the steady state: one
// metadata-only read).
func BenchmarkGet(b *testing.B) {
	data := benchRelease(b)
	src := fakeSource("cluster", 1, data)
	secret, _ := src.Secrets.Secrets("fleet").Get(context.Background(), SecretName("cluster", 1), metav1.GetOptions{})
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	src.Meta = fake.NewClientBuilder().WithScheme(scheme).WithObjects(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{
		Name: secret.Name, Namespace: "fleet", UID: secret.UID}}).Build()
	// The fake client stamps resourceVersion 999 on create; make the Secret
	// Helm's driver reads agree, as one API server's answers do.
	src.Secrets.(*fakeSecrets).secrets[secret.Name].ResourceVersion = "999"
	b.Run("decode", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := NewReader(0).Get(context.Background(), src, "fleet", "cluster", 1); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("memo", func(b *testing.B) {
		r := NewReader(0)
		if _, err := r.Get(context.Background(), src, "fleet", "cluster", 1); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, err := r.Get(context.Background(), src, "fleet", "cluster", 1); err != nil {
				b.Fatal(err)
			}
		}
		if n := DecodeCount(r); n != 1 {
			b.Fatalf("memo decoded %d times", n)
		}
	})
}
