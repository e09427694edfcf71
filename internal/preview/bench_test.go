package preview_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/preview"
	"github.com/templatedrift/template-drift-controller/internal/render"
	"github.com/templatedrift/template-drift-controller/internal/testenv"
)

// benchChange is the change the benchmarks preview: the workers' kubelet
// arguments, which rename their KubeadmConfigTemplate, so the preview
// creates, patches and deletes, and counts the Machines that roll.
const benchChange = `{"kubeletArgs": {"max-pods": "200"}}`

// installFleet installs the cluster chart n times, each in its own
// namespace, as helm-controller leaves an install.
func installFleet(b *testing.B, n int) []*helmv2.HelmRelease {
	b.Helper()
	ctx := context.Background()
	env := shared.Env(b)
	hrs := make([]*helmv2.HelmRelease, 0, n)
	for range n {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "bench-"}}
		if err := env.Client.Create(ctx, ns); err != nil {
			b.Fatal(err)
		}
		hr, err := testenv.InstallClusterChart(ctx, env, ns.Name, "csa")
		if err != nil {
			b.Fatal(err)
		}
		hrs = append(hrs, hr)
	}
	return hrs
}

// previewAll previews benchChange for every HelmRelease in turn, as
// `preview -A` does, as the previewer user.
func previewAll(b *testing.B, hrs []*helmv2.HelmRelease) (objects int) {
	b.Helper()
	env := shared.Env(b)
	c, err := client.New(previewer, client.Options{Scheme: env.Client.Scheme()})
	if err != nil {
		b.Fatal(err)
	}
	kinds, err := manifest.ParseKinds(manifest.DefaultTemplateKinds)
	if err != nil {
		b.Fatal(err)
	}
	shared, err := render.NewCluster(previewer)
	if err != nil {
		b.Fatal(err)
	}
	for _, hr := range hrs {
		proposed := hr.DeepCopy()
		proposed.Spec.Values = &apiextensionsv1.JSON{Raw: []byte(benchChange)}
		rep, err := preview.Run(context.Background(), preview.Request{HelmRelease: proposed, Local: c, Target: c,
			TargetConfig: previewer, Cluster: shared, Kinds: kinds, Now: time.Now()})
		if err != nil {
			b.Fatal(err)
		}
		if machines, _ := rep.RolledMachines(); machines == 0 {
			b.Fatalf("the preview of %s/%s predicts no rollout", hr.Namespace, hr.Name)
		}
		objects += len(rep.Objects)
	}
	return objects
}

// BenchmarkPreview is the time of one preview of one release, and of a
// fleet's (`preview -A`), on a real kube-apiserver with the Cluster API
// and Metal3 managers and webhooks (`make bench-preview`). The figures go
// in docs/benchmarks.md; nothing here asserts a time.
func BenchmarkPreview(b *testing.B) {
	for _, n := range []int{1, 100} {
		b.Run(fmt.Sprintf("releases=%d", n), func(b *testing.B) {
			hrs := installFleet(b, n)
			b.ResetTimer()
			var objects int
			for b.Loop() {
				objects = previewAll(b, hrs)
			}
			b.ReportMetric(float64(objects)/float64(n), "objects/release")
		})
	}
}
