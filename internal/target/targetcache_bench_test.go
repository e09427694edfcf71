package target

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// BenchmarkKubeConfigRotations rewrites a tenant's kubeconfig Secret and
// resolves its target after each rewrite, b.N times, and reports the live
// heap after a GC: it stays flat whatever b.N, because each rewrite's
// client replaces the last (run with -benchtime=10x and =1000x to compare).
func BenchmarkKubeConfigRotations(b *testing.B) {
	ctx := context.Background()
	secret, hr := tenantKubeConfig()
	c := fake.NewClientBuilder().WithObjects(secret).Build()
	targets := &Targets{Local: &rest.Config{Host: "https://127.0.0.1:1"}, Reader: c}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		secret.Data["rotation"] = []byte(fmt.Sprint(i))
		if err := c.Update(ctx, secret); err != nil {
			b.Fatal(err)
		}
		if _, err := targets.For(ctx, hr); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	b.ReportMetric(float64(m.HeapAlloc)/(1<<20), "heap-MiB")
	b.ReportMetric(float64(targets.Len()), "clients")
}
