package render

import (
	"context"
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/meta"
	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func TestValues(t *testing.T) {
	g := NewWithT(t)
	scheme := runtime.NewScheme()
	g.Expect(corev1.AddToScheme(scheme)).To(Succeed())
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "site", Namespace: "fleet"},
			Data: map[string]string{"values.yaml": "image:\n  url: http://site/image\n  checksum: http://site/sum\nreplicas: 3\n"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "bmc", Namespace: "fleet"},
			Data: map[string][]byte{"password": []byte("s3cret")}},
	).Build()
	hr := hrWith(helmv2.HelmReleaseSpec{
		ValuesFrom: []meta.ValuesReference{
			{Kind: "ConfigMap", Name: "site"},
			{Kind: "Secret", Name: "bmc", ValuesKey: "password", TargetPath: "bmc.password"},
			{Kind: "ConfigMap", Name: "absent", Optional: true},
		},
		Values: &apiextensionsv1.JSON{Raw: []byte(`{"image":{"url":"http://mgmt/image"}}`)},
	})

	vals, err := Values(context.Background(), logr.Discard(), c, hr)

	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(vals).To(Equal(map[string]any{
		"image":    map[string]any{"url": "http://mgmt/image", "checksum": "http://site/sum"},
		"replicas": float64(3),
		"bmc":      map[string]any{"password": "s3cret"},
	}))

	hr.Spec.ValuesFrom = append(hr.Spec.ValuesFrom, meta.ValuesReference{Kind: "Secret", Name: "missing"})
	_, err = Values(context.Background(), logr.Discard(), c, hr)
	g.Expect(err).To(MatchError(ContainSubstring("missing")))
}
