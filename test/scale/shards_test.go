package scale

import (
	"testing"

	. "github.com/onsi/gomega"

	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/testenv"
	"github.com/templatedrift/template-drift-controller/test/harness"
)

// TestShardOf: the releases are dealt out so that every shard gets as many
// drifted releases as in-sync ones, and as many releases as the others.
func TestShardOf(t *testing.T) {
	g := NewWithT(t)
	for _, shards := range []int{1, 2, 3, 4} {
		drifted, inSync := make([]int, shards), make([]int, shards)
		for i := range 400 * shards {
			if Drifted(i) {
				drifted[ShardOf(i, shards)]++
			} else {
				inSync[ShardOf(i, shards)]++
			}
		}
		for k := range shards {
			g.Expect(drifted[k]).To(Equal(200), "drifted in shard %d of %d", k, shards)
			g.Expect(inSync[k]).To(Equal(200), "in sync in shard %d of %d", k, shards)
		}
	}
}

// TestShardFlags: a shard selects its releases by Flux's sharding label; an
// unsharded run adds no flag.
func TestShardFlags(t *testing.T) {
	g := NewWithT(t)
	g.Expect(shardFlags(0, 1)).To(BeEmpty())
	g.Expect(shardFlags(2, 4)).To(Equal([]string{"--watch-label-selector=sharding.fluxcd.io/key in (shard3)"}))
}

// TestWithLabel: every object of a manifest gets the shard's label, beside
// the labels it had, and the manifest still splits into the same objects.
func TestWithLabel(t *testing.T) {
	g := NewWithT(t)
	in := FleetManifest(testenv.Management)
	out, err := withLabel(in, ShardKey, "shard2")
	g.Expect(err).NotTo(HaveOccurred())
	before, err := manifest.Split(in, "ns", 0)
	g.Expect(err).NotTo(HaveOccurred())
	after, err := manifest.Split(out, "ns", 0)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(after).To(HaveLen(len(before)))
	for i, o := range after {
		g.Expect(o.GetLabels()).To(HaveKeyWithValue(ShardKey, "shard2"), "%s %s", o.GetKind(), o.GetName())
		for k, v := range before[i].GetLabels() {
			g.Expect(o.GetLabels()).To(HaveKeyWithValue(k, v))
		}
		o.SetLabels(before[i].GetLabels())
		g.Expect(o.Object).To(Equal(before[i].Object), "%s %s", o.GetKind(), o.GetName())
	}
	_, err = withLabel("kind: [", ShardKey, "shard1")
	g.Expect(err).To(HaveOccurred())
}

// TestShardsCell: the table names the shards and each one's RSS.
func TestShardsCell(t *testing.T) {
	g := NewWithT(t)
	g.Expect(shardsCell(Result{})).To(Equal("1"))
	g.Expect(shardsCell(Result{Addon: &AddonFigures{Shards: 1, ShardMemory: []harness.Memory{{RSS: 100 << 20}}}})).To(Equal("1"))
	g.Expect(shardsCell(Result{Addon: &AddonFigures{Shards: 2, ShardMemory: []harness.Memory{{RSS: 100 << 20}, {RSS: 110 << 20}}}})).To(Equal("2 (100 MiB, 110 MiB)"))
}
