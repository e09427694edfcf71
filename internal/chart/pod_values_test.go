package chart_test

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	. "github.com/onsi/gomega"
)

// TestPodValues: with values-pod.yaml (two instances) each controller Pod
// is pinned by digest, carries podAnnotations, and podLabels next to the
// chart's own labels, which its Deployment, the metrics Service and the
// PodMonitor still select; it has the priority class; a topology spread
// constraint without labelSelector spreads the instance's own Pods, and
// one with a labelSelector is kept as written.
func TestPodValues(t *testing.T) {
	g := NewWithT(t)
	vals := readValues(t, "values-pod.yaml")
	_, objs := mustRender(t, "values-pod.yaml")
	image := vals["image"].(map[string]any)
	svcs := ofKind(objs, "Service")
	g.Expect(svcs).To(HaveLen(1))
	svc := fromUnstructured[corev1.Service](g, svcs[0])

	deps := ofKind(objs, "Deployment")
	g.Expect(deps).To(HaveLen(2), "the main instance and a shard")
	for _, o := range deps {
		d := fromUnstructured[appsv1.Deployment](g, o)
		pod := d.Spec.Template
		g.Expect(pod.Spec.Containers[0].Image).To(Equal("ghcr.io/templatedrift/template-drift-controller@"+image["digest"].(string)),
			"repository@digest, the tag ignored")
		g.Expect(pod.Annotations).To(Equal(map[string]string{
			"example.com/scrape-team":                        "platform",
			"cluster-autoscaler.kubernetes.io/safe-to-evict": "true",
		}))
		g.Expect(pod.Labels).To(HaveKeyWithValue("example.com/team", "platform"))
		g.Expect(pod.Labels).To(HaveKeyWithValue("sidecar.istio.io/inject", "false"))
		g.Expect(pod.Labels).To(HaveKeyWithValue("app", "template-drift-controller"))
		g.Expect(pod.Labels).To(HaveKeyWithValue("app.kubernetes.io/part-of", "template-drift-controller"))
		sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(sel.Matches(labels.Set(pod.Labels))).To(BeTrue(), "%s selects its Pods", d.Name)
		g.Expect(labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(pod.Labels))).To(BeTrue(), "the metrics Service selects %s's Pods", d.Name)
		g.Expect(pod.Spec.PriorityClassName).To(Equal("platform-controllers"))

		tsc := pod.Spec.TopologySpreadConstraints
		g.Expect(tsc).To(HaveLen(2))
		g.Expect(tsc[0].LabelSelector).To(Equal(d.Spec.Selector), "%s: the constraint without labelSelector spreads the instance's Pods", d.Name)
		g.Expect(tsc[0].TopologyKey).To(Equal("topology.kubernetes.io/zone"))
		g.Expect(tsc[0].MatchLabelKeys).To(Equal([]string{"pod-template-hash"}))
		g.Expect(tsc[1].LabelSelector).To(Equal(&metav1.LabelSelector{MatchLabels: map[string]string{"app.kubernetes.io/part-of": "template-drift-controller"}}),
			"a labelSelector given is kept")
	}
}

// TestPodLabelsKeepSelectors: podLabels may not set a label the chart sets
// on its Pods and selects them by; the render fails and names the key.
func TestPodLabelsKeepSelectors(t *testing.T) {
	for _, key := range []string{"app.kubernetes.io/name", "app.kubernetes.io/instance", "app.kubernetes.io/part-of", "app"} {
		t.Run(key, func(t *testing.T) {
			g := NewWithT(t)
			_, err := renderChart(t, map[string]any{"podLabels": map[string]any{key: "mine"}})
			g.Expect(err).To(MatchError(ContainSubstring("podLabels." + key + ": the chart sets this label on its Pods")))
		})
	}
}
