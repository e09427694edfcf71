package chart_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	. "github.com/onsi/gomega"
)

// TestAPIServerAcceptsManifests creates every object of every render of the
// chart, and of config/default, on a real API server with dryRun=All and
// strict field validation: schema errors, unknown or misspelt fields,
// duplicate keys and invalid values all fail, and nothing is stored. The
// ServiceMonitor, PodMonitor and PrometheusRule are validated against
// fixtures of their CRDs, and config/prometheus and config/grafana are
// created too.
func TestAPIServerAcceptsManifests(t *testing.T) {
	env := sharedEnv(t)
	ctx := t.Context()
	g := NewWithT(t)
	g.Expect(client.IgnoreAlreadyExists(env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}))).To(Succeed())
	for _, crd := range []string{"servicemonitor-crd.yaml", "podmonitor-crd.yaml", "prometheusrule-crd.yaml"} {
		installCRD(ctx, t, env.Client, filepath.Join("testdata", crd))
	}
	g.Expect(client.IgnoreAlreadyExists(env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "monitoring"}}))).To(Succeed())

	sources := map[string][]*unstructured.Unstructured{}
	for _, dir := range []string{"config/default", "config/prometheus", "config/grafana"} {
		sources[dir] = buildKustomize(t, dir)
	}
	for _, tc := range goldenCases {
		_, sources["chart "+tc.name] = mustRender(t, tc.values)
	}
	for name, objs := range sources {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(objs).NotTo(BeEmpty())
			var refused []string
			for _, o := range objs {
				err := env.Client.Create(ctx, o.DeepCopy(), client.DryRunAll, client.FieldValidation(metav1.FieldValidationStrict))
				if err != nil {
					refused = append(refused, objectKey(o)+": "+err.Error())
				}
			}
			g.Expect(refused).To(BeEmpty(), "the API server refuses these objects")
		})
	}
}

// installCRD creates the CRD in path and waits until it is established and
// its kind is served.
func installCRD(ctx context.Context, t testing.TB, c client.Client, path string) {
	t.Helper()
	g := NewWithT(t)
	data, err := os.ReadFile(path)
	g.Expect(err).NotTo(HaveOccurred())
	crd := &apiextensionsv1.CustomResourceDefinition{}
	g.Expect(yaml.UnmarshalStrict(data, crd)).To(Succeed())
	g.Expect(c.Create(ctx, crd)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(crd), crd)).To(Succeed())
		established := false
		for _, cond := range crd.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				established = true
			}
		}
		g.Expect(established).To(BeTrue(), "CRD %s not established", crd.Name)
		list := &unstructured.UnstructuredList{}
		list.SetAPIVersion(crd.Spec.Group + "/" + crd.Spec.Versions[0].Name)
		list.SetKind(crd.Spec.Names.ListKind)
		g.Expect(c.List(ctx, list, client.InNamespace(namespace))).To(Succeed())
	}).WithTimeout(30 * time.Second).WithPolling(200 * time.Millisecond).Should(Succeed())
}
