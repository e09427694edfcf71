package chart_test

import (
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestShards: sharding.shards deploys one more Deployment per shard, as Flux
// shards its controllers. The main instance handles the HelmReleases
// without the sharding key and each shard those that name it; no
// Deployment's selector matches another's pods. Without shards there is one
// Deployment and no selector flag.
func TestShards(t *testing.T) {
	g := NewWithT(t)
	selectorArgs := func(d *unstructured.Unstructured) []string {
		var out []string
		for _, a := range deploymentArgs(t, []*unstructured.Unstructured{d}) {
			if len(a) > len("--watch-label-selector=") && a[:len("--watch-label-selector=")] == "--watch-label-selector=" {
				out = append(out, a)
			}
		}
		return out
	}

	files, err := renderChart(t, map[string]any{})
	g.Expect(err).NotTo(HaveOccurred())
	objs, err := decodeObjects([]byte(manifest(files)))
	g.Expect(err).NotTo(HaveOccurred())
	deployments := ofKind(objs, "Deployment")
	g.Expect(deployments).To(HaveLen(1))
	g.Expect(selectorArgs(deployments[0])).To(BeEmpty())

	files, err = renderChart(t, map[string]any{"sharding": map[string]any{"key": "sharding.fluxcd.io/key", "shards": []any{"shard1", "shard2"}}})
	g.Expect(err).NotTo(HaveOccurred())
	objs, err = decodeObjects([]byte(manifest(files)))
	g.Expect(err).NotTo(HaveOccurred())
	deployments = ofKind(objs, "Deployment")
	g.Expect(deployments).To(HaveLen(3))
	byName := map[string]*unstructured.Unstructured{}
	for _, d := range deployments {
		byName[d.GetName()] = d
	}
	g.Expect(byName).To(HaveKey(releaseName))
	g.Expect(selectorArgs(byName[releaseName])).To(ConsistOf("--watch-label-selector=!sharding.fluxcd.io/key"))
	for _, shard := range []string{"shard1", "shard2"} {
		d := byName[releaseName+"-"+shard]
		g.Expect(d).NotTo(BeNil(), "a Deployment for %s", shard)
		g.Expect(selectorArgs(d)).To(ConsistOf("--watch-label-selector=sharding.fluxcd.io/key in (" + shard + ")"))
		g.Expect(d.GetLabels()).To(HaveKeyWithValue("sharding.fluxcd.io/key", shard))
	}
	// No selector matches the pods of another Deployment.
	for _, a := range deployments {
		sel, _, _ := unstructured.NestedStringMap(a.Object, "spec", "selector", "matchLabels")
		for _, b := range deployments {
			pods, _, _ := unstructured.NestedStringMap(b.Object, "spec", "template", "metadata", "labels")
			matches := true
			for k, v := range sel {
				matches = matches && pods[k] == v
			}
			g.Expect(matches).To(Equal(a.GetName() == b.GetName()), "%s's selector against %s's pods", a.GetName(), b.GetName())
		}
	}

	_, err = renderChart(t, map[string]any{"sharding": map[string]any{"key": "sharding.fluxcd.io/key", "shards": []any{"Shard_1"}}})
	g.Expect(err).To(HaveOccurred(), "a shard name that is no DNS label is refused by the schema")
}
