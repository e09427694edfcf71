package chart_test

import (
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	. "github.com/onsi/gomega"
)

// hookAnnotation makes a rendered object a Helm hook: Helm keeps it out of
// the release's manifest and creates it only on its event.
const hookAnnotation = "helm.sh/hook"

// withoutHooks returns the objects an install applies: those that are not
// hooks.
func withoutHooks(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if _, ok := o.GetAnnotations()[hookAnnotation]; !ok {
			out = append(out, o)
		}
	}
	return out
}

// hooksOf returns the objects that are hooks.
func hooksOf(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if _, ok := o.GetAnnotations()[hookAnnotation]; ok {
			out = append(out, o)
		}
	}
	return out
}

// fromUnstructured converts a rendered object to its typed form.
func fromUnstructured[T any](g Gomega, o *unstructured.Unstructured) *T {
	out := new(T)
	g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(o.Object, out, true)).To(Succeed(), objectKey(o))
	return out
}

// TestHelmTestPod: the chart's one hook is the `helm test` Pod. It runs the
// controller's image (digest included) with check-metrics against the
// metrics Service's in-cluster URL and port, under the controller's
// security contexts, without a token (the metrics are plain HTTP without
// authentication), and never restarts. No selector of the chart matches it,
// so no ReplicaSet adopts it and no scrape reaches it.
func TestHelmTestPod(t *testing.T) {
	cases := []struct {
		// name describes the values.
		name string
		// values are inline values over the defaults.
		values string
		// wantURL is the URL check-metrics is given.
		wantURL string
	}{
		{name: "defaults", wantURL: "http://template-drift-controller-metrics.flux-system.svc:8080/metrics"},
		{
			name:    "another port and name",
			values:  "fullnameOverride: tdc\nmetrics:\n  port: 9090",
			wantURL: "http://tdc-metrics.flux-system.svc:9090/metrics",
		},
		{
			name:    "digest, shards, pod labels, monitoring",
			values:  "image:\n  digest: sha256:" + fmt.Sprintf("%064x", 7) + "\nsharding:\n  shards: [a]\npodLabels:\n  team: x\npodMonitor:\n  enabled: true",
			wantURL: "http://template-drift-controller-metrics.flux-system.svc:8080/metrics",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			vals, err := readValuesString(tc.values)
			g.Expect(err).NotTo(HaveOccurred())
			files, err := renderChart(t, vals)
			g.Expect(err).NotTo(HaveOccurred())
			objs, err := decodeObjects([]byte(manifest(files)))
			g.Expect(err).NotTo(HaveOccurred())

			hooks := hooksOf(objs)
			g.Expect(hooks).To(HaveLen(1), "one hook: the test Pod")
			g.Expect(hooks[0].GetKind()).To(Equal("Pod"))
			g.Expect(hooks[0].GetAnnotations()).To(HaveKeyWithValue(hookAnnotation, "test"))
			g.Expect(hooks[0].GetAnnotations()).To(HaveKeyWithValue("helm.sh/hook-delete-policy", "before-hook-creation,hook-succeeded"),
				"a new run replaces it; a failed one is kept for its log")
			pod := fromUnstructured[corev1.Pod](g, hooks[0])
			g.Expect(pod.Spec.RestartPolicy).To(Equal(corev1.RestartPolicyNever))
			g.Expect(pod.Spec.AutomountServiceAccountToken).To(HaveValue(BeFalse()), "the metrics need no token")
			g.Expect(pod.Spec.Containers).To(HaveLen(1))
			c := pod.Spec.Containers[0]
			g.Expect(c.Command).To(BeEmpty(), "the image's entrypoint is the controller binary")
			g.Expect(c.Args).To(Equal([]string{"check-metrics", tc.wantURL}))

			deps := ofKind(objs, "Deployment")
			g.Expect(deps).NotTo(BeEmpty())
			for _, o := range deps {
				d := fromUnstructured[appsv1.Deployment](g, o)
				manager := d.Spec.Template.Spec.Containers[0]
				g.Expect(c.Image).To(Equal(manager.Image), "the controller's image")
				g.Expect(c.ImagePullPolicy).To(Equal(manager.ImagePullPolicy))
				g.Expect(c.SecurityContext).To(Equal(manager.SecurityContext), "the controller's container security context")
				g.Expect(pod.Spec.SecurityContext).To(Equal(d.Spec.Template.Spec.SecurityContext), "the controller's pod security context")
				sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(sel.Matches(labels.Set(pod.Labels))).To(BeFalse(), "Deployment %s's selector matches the test Pod", d.Name)
			}
			g.Expect(c.SecurityContext).NotTo(BeNil())
			g.Expect(c.SecurityContext.RunAsNonRoot).To(HaveValue(BeTrue()))
			g.Expect(c.SecurityContext.ReadOnlyRootFilesystem).To(HaveValue(BeTrue()))
			g.Expect(c.SecurityContext.AllowPrivilegeEscalation).To(HaveValue(BeFalse()))
			g.Expect(c.SecurityContext.Capabilities.Drop).To(ConsistOf(corev1.Capability("ALL")))
			g.Expect(c.SecurityContext.SeccompProfile.Type).To(Equal(corev1.SeccompProfileTypeRuntimeDefault))

			svcs := ofKind(objs, "Service")
			g.Expect(svcs).To(HaveLen(1))
			svc := fromUnstructured[corev1.Service](g, svcs[0])
			g.Expect(tc.wantURL).To(Equal(fmt.Sprintf("http://%s.%s.svc:%d/metrics", svc.Name, svc.Namespace, svc.Spec.Ports[0].Port)),
				"the metrics Service's name, namespace and port")
			g.Expect(labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(pod.Labels))).To(BeFalse(), "the metrics Service selects the test Pod")
			for _, pm := range ofKind(objs, "PodMonitor") {
				sel, _, _ := unstructured.NestedStringMap(pm.Object, "spec", "selector", "matchLabels")
				g.Expect(labels.SelectorFromSet(sel).Matches(labels.Set(pod.Labels))).To(BeFalse(), "the PodMonitor selects the test Pod")
			}
			g.Expect(pod.Labels).NotTo(HaveKey("app"), "Flux's PodMonitor selects app")
		})
	}
}

// TestHelmTestPodOptional: tests.enabled false renders no test Pod, and
// neither does a chart without the metrics Service it checks.
func TestHelmTestPodOptional(t *testing.T) {
	for _, values := range []string{"tests:\n  enabled: false", "metrics:\n  service:\n    enabled: false"} {
		t.Run(values, func(t *testing.T) {
			g := NewWithT(t)
			vals, err := readValuesString(values)
			g.Expect(err).NotTo(HaveOccurred())
			files, err := renderChart(t, vals)
			g.Expect(err).NotTo(HaveOccurred())
			objs, err := decodeObjects([]byte(manifest(files)))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(hooksOf(objs)).To(BeEmpty())
			g.Expect(ofKind(objs, "Deployment")).To(HaveLen(1))
		})
	}
}
