package preview_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/preview"
	"github.com/templatedrift/template-drift-controller/internal/render"
	"github.com/templatedrift/template-drift-controller/internal/testenv"
)

// benchKubeletArgs is the change the benchmarks preview: the workers'
// kubelet arguments, which rename their KubeadmConfigTemplates, so the
// preview creates, patches and deletes, and counts the Machines that roll.
var benchKubeletArgs = map[string]any{"max-pods": "200"}

// installFleet installs the cluster chart n times with values, each in its
// own namespace, as helm-controller leaves an install.
func installFleet(b *testing.B, n int, values map[string]any) []*helmv2.HelmRelease {
	b.Helper()
	ctx := context.Background()
	env := shared.Env(b)
	hrs := make([]*helmv2.HelmRelease, 0, n)
	for range n {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "bench-"}}
		if err := env.Client.Create(ctx, ns); err != nil {
			b.Fatal(err)
		}
		hr, err := testenv.InstallClusterChartWith(ctx, env, ns.Name, "csa", values)
		if err != nil {
			b.Fatal(err)
		}
		hrs = append(hrs, hr)
	}
	return hrs
}

// settle waits until the API server takes fewer than 5 writes a second,
// over three samples 2 s apart (at most 5 minutes): the Cluster API and
// Metal3 managers have done what a fleet just installed gives them, so the
// figure is the preview's and not their catch-up's. Every write moves
// etcd's revision, which a list returns as its resourceVersion.
func settle(b *testing.B) {
	b.Helper()
	ctx := context.Background()
	c := shared.Env(b).Client
	revision := func() int64 {
		l := &unstructured.UnstructuredList{}
		l.SetAPIVersion("v1")
		l.SetKind("NamespaceList")
		if err := c.List(ctx, l, client.Limit(1)); err != nil {
			b.Fatal(err)
		}
		var rv int64
		_, _ = fmt.Sscan(l.GetResourceVersion(), &rv)
		return rv
	}
	start, last, quiet := time.Now(), revision(), 0
	for quiet < 3 && time.Since(start) < 5*time.Minute {
		time.Sleep(2 * time.Second)
		now := revision()
		if now-last < 10 {
			quiet++
		} else {
			quiet = 0
		}
		last = now
	}
	b.Logf("settled in %s", time.Since(start).Round(time.Second))
}

// previewAll previews the kubelet change for every HelmRelease, parallel
// at a time, as `preview -A --parallel` does, as the previewer user;
// values are the releases' own, which the change keeps.
func previewAll(b *testing.B, hrs []*helmv2.HelmRelease, values map[string]any, parallel int) (objects int) {
	b.Helper()
	env := shared.Env(b)
	// The command's --kube-api-qps and --kube-api-burst defaults.
	cfg := rest.CopyConfig(previewer)
	cfg.QPS, cfg.Burst = 50, 300
	c, err := client.New(cfg, client.Options{Scheme: env.Client.Scheme()})
	if err != nil {
		b.Fatal(err)
	}
	kinds, err := manifest.ParseKinds(manifest.DefaultTemplateKinds)
	if err != nil {
		b.Fatal(err)
	}
	cluster, err := render.NewCluster(cfg)
	if err != nil {
		b.Fatal(err)
	}
	proposedValues := map[string]any{"kubeletArgs": benchKubeletArgs}
	for k, v := range values {
		proposedValues[k] = v
	}
	raw, err := json.Marshal(proposedValues)
	if err != nil {
		b.Fatal(err)
	}
	var mu sync.Mutex
	var g errgroup.Group
	g.SetLimit(parallel)
	for _, hr := range hrs {
		g.Go(func() error {
			proposed := hr.DeepCopy()
			proposed.Spec.Values = &apiextensionsv1.JSON{Raw: raw}
			rep, err := preview.Run(context.Background(), preview.Request{HelmRelease: proposed, Local: c, Target: c,
				TargetConfig: cfg, Cluster: cluster, Kinds: kinds, Now: time.Now()})
			if err != nil {
				return err
			}
			if machines, _ := rep.RolledMachines(); machines == 0 {
				return fmt.Errorf("the preview of %s/%s predicts no rollout", hr.Namespace, hr.Name)
			}
			mu.Lock()
			defer mu.Unlock()
			objects += len(rep.Objects)
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		b.Fatal(err)
	}
	return objects
}

// BenchmarkPreview is the time of one preview of one release (the e2e
// cluster chart: 10 objects; with three worker pools: 22), and of a
// fleet's (`preview -A`, 100 releases in turn and 4 at a time as
// --parallel's default, timed once the managers have settled), on a real kube-apiserver with the Cluster API and Metal3
// managers and webhooks (`make bench-preview`). The figures go in
// docs/benchmarks.md; nothing here asserts a time.
func BenchmarkPreview(b *testing.B) {
	cases := []struct {
		name     string
		releases int
		values   map[string]any
		parallel int
	}{
		{name: "releases=1", releases: 1, parallel: 1},
		{name: "releases=1,pools=3", releases: 1, values: map[string]any{"workerPools": 3}, parallel: 1},
		{name: "releases=100", releases: 100, parallel: 1},
		{name: "releases=100,parallel=4", releases: 100, parallel: 4},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			hrs := installFleet(b, tc.releases, tc.values)
			settle(b)
			b.ResetTimer()
			var objects int
			for b.Loop() {
				objects = previewAll(b, hrs, tc.values, tc.parallel)
			}
			b.ReportMetric(float64(objects)/float64(tc.releases), "objects/release")
		})
	}
}
