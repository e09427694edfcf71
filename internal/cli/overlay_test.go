package cli

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// TestProposedValues: valuesFrom reads a ConfigMap or Secret the proposals
// hold before the cluster's, folds a proposed Secret's stringData into data
// as the API server would, and reads any other from the cluster.
func TestProposedValues(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	live := fake.NewClientBuilder().WithObjects(
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "fleet", Name: "values"}, Data: map[string]string{"v": "live"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "fleet", Name: "other"}, Data: map[string]string{"v": "live"}},
	).Build()
	proposed := []*unstructured.Unstructured{
		{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"namespace": "fleet", "name": "values"}, "data": map[string]any{"v": "proposed"}}},
		{Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
			"metadata": map[string]any{"namespace": "fleet", "name": "secret"},
			"data":     map[string]any{"a": "YQ=="}, "stringData": map[string]any{"b": "b"}}},
		{Object: map[string]any{"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "OCIRepository",
			"metadata": map[string]any{"namespace": "fleet", "name": "values"}}},
	}
	c := withProposedValues(live, proposed)

	cm := &corev1.ConfigMap{}
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: "fleet", Name: "values"}, cm)).To(Succeed())
	g.Expect(cm.Data).To(Equal(map[string]string{"v": "proposed"}), "the proposal's, not the cluster's")
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: "fleet", Name: "other"}, cm)).To(Succeed())
	g.Expect(cm.Data).To(Equal(map[string]string{"v": "live"}), "one the proposals do not hold")
	s := &corev1.Secret{}
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: "fleet", Name: "secret"}, s)).To(Succeed())
	g.Expect(s.Data).To(Equal(map[string][]byte{"a": []byte("a"), "b": []byte("b")}), "stringData folded into data")
	g.Expect(s.StringData).To(BeEmpty())

	g.Expect(withProposedValues(live, proposed[2:])).To(BeIdenticalTo(live), "no ConfigMap or Secret: the cluster's client")
}
