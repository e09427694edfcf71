package scale

import (
	"context"
	"fmt"
	"strings"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
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

// shardsCell is the table's shards column: the number of processes, and
// with more than one each one's RSS.
func shardsCell(r Result) string {
	a := r.Addon
	if a == nil || a.Shards <= 1 {
		return "1"
	}
	rss := make([]string, 0, len(a.ShardMemory))
	for _, m := range a.ShardMemory {
		rss = append(rss, mebibytes(m.RSS))
	}
	return fmt.Sprintf("%d (%s)", a.Shards, strings.Join(rss, ", "))
}
