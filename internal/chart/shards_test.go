package chart_test

import (
	"strings"
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
			if strings.HasPrefix(a, "--watch-label-selector=") {
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

	_, err = renderChart(t, map[string]any{"sharding": map[string]any{"key": "sharding.fluxcd.io/key", "shards": []any{"shard1"}, "objectsLabelled": true}})
	g.Expect(err).To(HaveOccurred(), "a setting the chart no longer has is refused by the schema")
	_, err = renderChart(t, map[string]any{"sharding": map[string]any{"key": "sharding.fluxcd.io/key", "shards": []any{"Shard_1"}}})
	g.Expect(err).To(HaveOccurred(), "a shard name that is no DNS label is refused by the schema")
}

// TestEveryShardScraped: the metrics Service and the PodMonitor select the
// pods of every instance, the shards' included, on the container port
// named http-prom, and not the pods of another release of the chart in the
// same namespace; every pod carries the app label Flux's PodMonitor
// selects.
func TestEveryShardScraped(t *testing.T) {
	g := NewWithT(t)
	vals := map[string]any{
		"sharding":   map[string]any{"shards": []any{"shard1", "shard2"}},
		"podMonitor": map[string]any{"enabled": true},
	}
	render := func(name string) []*unstructured.Unstructured {
		files, err := renderRelease(t, vals, name, namespace)
		g.Expect(err).NotTo(HaveOccurred())
		objs, err := decodeObjects([]byte(manifest(files)))
		g.Expect(err).NotTo(HaveOccurred())
		return objs
	}
	objs, others := render(releaseName), render("other")
	podLabels := func(objs []*unstructured.Unstructured) []map[string]string {
		var out []map[string]string
		for _, d := range ofKind(objs, "Deployment") {
			l, _, _ := unstructured.NestedStringMap(d.Object, "spec", "template", "metadata", "labels")
			out = append(out, l)
		}
		return out
	}
	matches := func(sel, labels map[string]string) bool {
		for k, v := range sel {
			if labels[k] != v {
				return false
			}
		}
		return true
	}

	svc := ofKind(objs, "Service")
	g.Expect(svc).To(HaveLen(1))
	svcSel, _, _ := unstructured.NestedStringMap(svc[0].Object, "spec", "selector")
	pm := ofKind(objs, "PodMonitor")
	g.Expect(pm).To(HaveLen(1))
	pmSel, _, _ := unstructured.NestedStringMap(pm[0].Object, "spec", "selector", "matchLabels")
	pods := podLabels(objs)
	g.Expect(pods).To(HaveLen(3), "the main instance and two shards")
	for _, sel := range []map[string]string{svcSel, pmSel} {
		g.Expect(sel).NotTo(BeEmpty())
		for _, l := range pods {
			g.Expect(matches(sel, l)).To(BeTrue(), "selector %v matches pod labels %v", sel, l)
			g.Expect(l).To(HaveKeyWithValue("app", "template-drift-controller"), "the label Flux's PodMonitor selects")
		}
		for _, l := range podLabels(others) {
			g.Expect(matches(sel, l)).To(BeFalse(), "selector %v does not match release other's pods %v", sel, l)
		}
	}

	endpoints, _, _ := unstructured.NestedSlice(pm[0].Object, "spec", "podMetricsEndpoints")
	g.Expect(endpoints).To(ConsistOf(HaveKeyWithValue("port", "http-prom")))
	ports, _, _ := unstructured.NestedSlice(svc[0].Object, "spec", "ports")
	g.Expect(ports).To(ConsistOf(HaveKeyWithValue("targetPort", "http-prom")))
	for _, d := range ofKind(objs, "Deployment") {
		containers, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
		g.Expect(containers).To(HaveLen(1))
		cports, _, _ := unstructured.NestedSlice(containers[0].(map[string]any), "ports")
		g.Expect(cports).To(ContainElement(And(HaveKeyWithValue("name", "http-prom"), HaveKeyWithValue("containerPort", BeNumerically("==", 8080)))),
			"%s names its metrics port http-prom", d.GetName())
	}
}
