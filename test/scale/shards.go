package scale

import (
	"context"
	"fmt"
	"strings"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/templatedrift/template-drift-controller/test/harness"
)

// ShardKey is Flux's sharding label: a controller started with
// --watch-label-selector on it reconciles the HelmReleases of its shard.
const ShardKey = "sharding.fluxcd.io/key"

// ShardName is the name of the k-th shard (from 0), as the label's value.
func ShardName(k int) string { return fmt.Sprintf("shard%d", k+1) }

// ShardOf is the shard (from 0) of the i-th release when the fleet has the
// given number of shards. The releases are dealt out by pairs, so that each
// shard has as many drifted releases as in-sync ones: Drifted is every
// other release, and dealing by i % shards with an even number of shards
// would give some shards only drifted releases.
func ShardOf(i, shards int) int { return (i / 2) % shards }

// shardFlags are the flags that make a controller process the k-th of
// shards, none when there is one.
func shardFlags(k, shards int) []string {
	if shards <= 1 {
		return nil
	}
	selector := ShardKey + " in (" + ShardName(k) + ")"
	return []string{"--watch-label-selector=" + selector}
}

// withLabel returns manifest with the label key=value on every object.
func withLabel(manifest, key, value string) (string, error) {
	docs := strings.Split(manifest, "\n---\n")
	out := make([]string, 0, len(docs))
	for _, d := range docs {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(d), &m); err != nil {
			return "", fmt.Errorf("failed to label a fleet manifest document: %w", err)
		}
		if len(m) == 0 {
			continue
		}
		u := unstructured.Unstructured{Object: m}
		labels := u.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels[key] = value
		u.SetLabels(labels)
		b, err := yaml.Marshal(u.Object)
		if err != nil {
			return "", fmt.Errorf("failed to label a fleet manifest document: %w", err)
		}
		out = append(out, string(b))
	}
	return strings.Join(out, "\n---\n"), nil
}

// labelShards labels every HelmRelease of the fleet with its shard, and
// sets the label in its spec.commonMetadata.labels.
func labelShards(ctx context.Context, c client.Client, n, shards int) error {
	if shards <= 1 {
		return nil
	}
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(setupWorkers)
	for i := range n {
		g.Go(func() error {
			hr := &helmv2.HelmRelease{}
			hr.SetNamespace(Namespace(i))
			hr.SetName(releaseName)
			// The objects carry the label already (createFleet):
			// spec.commonMetadata is what puts it there on a cluster.
			shard := ShardName(ShardOf(i, shards))
			patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%q}},"spec":{"commonMetadata":{"labels":{%q:%q}}}}`, ShardKey, shard, ShardKey, shard)
			if err := c.Patch(ctx, hr, client.RawPatch("application/merge-patch+json", []byte(patch))); err != nil {
				return fmt.Errorf("failed to label %s/%s with its shard: %w", hr.Namespace, hr.Name, err)
			}
			return nil
		})
	}
	return g.Wait()
}

// exited returns an error naming the first shard whose process exited.
func (r *run) exited() error {
	for _, p := range r.shards {
		if p.Exited() {
			return fmt.Errorf("the controller exited (see %s)", p.LogPath)
		}
	}
	return nil
}

// controllerCPU is the CPU time of every shard.
func (r *run) controllerCPU() (time.Duration, error) {
	var sum time.Duration
	for _, p := range r.shards {
		cpu, err := harness.CPUTime(p.PID())
		if err != nil {
			return 0, err
		}
		sum += cpu
	}
	return sum, nil
}

// reconciles is the reconciles of every shard.
func (r *run) reconciles() (float64, error) {
	var sum float64
	for _, addr := range r.metricsAddrs {
		n, err := Reconciles(addr, r.target.MetricsController)
		if err != nil {
			return 0, err
		}
		sum += n
	}
	return sum, nil
}

// breakdown is where every shard's convergence went, summed.
func (r *run) breakdown() (Breakdown, error) {
	var sum Breakdown
	for _, addr := range r.metricsAddrs {
		b, err := ReadBreakdown(addr, r.target.MetricsController)
		if err != nil {
			return sum, err
		}
		sum.Reconciles += b.Reconciles
		sum.ReconcileSeconds += b.ReconcileSeconds
		sum.QueueSeconds += b.QueueSeconds
	}
	return sum, nil
}

// memory reads every shard's resident memory: the sum, and each one.
func (r *run) memory() (harness.Memory, []harness.Memory, error) {
	var sum harness.Memory
	each := make([]harness.Memory, 0, len(r.shards))
	for _, p := range r.shards {
		m, err := harness.ReadMemory(p.PID())
		if err != nil {
			return sum, nil, err
		}
		sum.RSS += m.RSS
		sum.Peak += m.Peak
		each = append(each, m)
	}
	return sum, each, nil
}

// stopShards stops every shard's process.
func (r *run) stopShards() {
	for _, p := range r.shards {
		p.Stop()
	}
}

// shardsCell is the table's shards column: the number of processes, and
// with more than one each one's RSS.
func shardsCell(r Result) string {
	if r.Shards <= 1 {
		return "1"
	}
	rss := make([]string, 0, len(r.ShardMemory))
	for _, m := range r.ShardMemory {
		rss = append(rss, mebibytes(m.RSS))
	}
	return fmt.Sprintf("%d (%s)", r.Shards, strings.Join(rss, ", "))
}
