package kustomization

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// fleet writes a fleet repository: a base HelmRelease whose values come
// from a generated ConfigMap, and a production overlay that patches it and
// changes the values file.
func fleet(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		"base/kustomization.yaml": `resources: [helmrelease.yaml]
configurations: [kustomizeconfig.yaml]
configMapGenerator:
- name: cluster-values
  files: [values.yaml=values.yaml]
`,
		"base/values.yaml": "workers: 2\n",
		// Flux's documented way to let kustomize rename valuesFrom.
		"base/kustomizeconfig.yaml": `nameReference:
- kind: ConfigMap
  version: v1
  fieldSpecs:
  - path: spec/valuesFrom/name
    kind: HelmRelease
`,
		"base/helmrelease.yaml": `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: ${cluster_name}
spec:
  interval: 10m
  chartRef: {kind: OCIRepository, name: cluster-chart}
  valuesFrom:
  - kind: ConfigMap
    name: cluster-values
  values:
    region: ${region:=eu-west}
    secretThing: ${token}
`,
		"overlays/production/kustomization.yaml": `resources: [../../base]
configMapGenerator:
- name: cluster-values
  behavior: replace
  files: [values.yaml=values.yaml]
`,
		"overlays/production/values.yaml": "workers: 5\n",
		"outside/kustomization.yaml":      "resources: [../../..]\n",
	}
	for name, data := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func byKind(objs []*unstructured.Unstructured, kind string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind {
			return o
		}
	}
	return nil
}

func TestBuildAsKustomizeControllerDoes(t *testing.T) {
	g := NewWithT(t)
	root := fleet(t)
	vars := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "fleet", Name: "cluster-vars"}, Data: map[string][]byte{"token": []byte("s3cr3t\n")}}
	c := fake.NewClientBuilder().WithObjects(vars).Build()
	ks := &kustomizev1.Kustomization{ObjectMeta: metav1.ObjectMeta{Namespace: "fleet", Name: "production"},
		Spec: kustomizev1.KustomizationSpec{
			TargetNamespace: "clusters",
			PostBuild: &kustomizev1.PostBuild{
				Substitute: map[string]string{"cluster_name": "prod-1"},
				SubstituteFrom: []kustomizev1.SubstituteReference{
					{Kind: "Secret", Name: "cluster-vars"},
					{Kind: "ConfigMap", Name: "absent", Optional: true},
				},
			},
		}}
	objs, err := Build(context.Background(), c, root, filepath.Join(root, "overlays/production"), ks)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(objs).To(HaveLen(2))

	cm := byKind(objs, "ConfigMap")
	g.Expect(cm.GetNamespace()).To(Equal("clusters"), "targetNamespace applies")
	g.Expect(cm.GetName()).To(MatchRegexp(`^cluster-values-[a-z0-9]{10}$`), "the generated name is hashed")
	data, _, _ := unstructured.NestedStringMap(cm.Object, "data")
	g.Expect(data).To(Equal(map[string]string{"values.yaml": "workers: 5\n"}), "the overlay's values file replaces the base's")

	hr := byKind(objs, "HelmRelease")
	g.Expect(hr.GetName()).To(Equal("prod-1"), "inline substitution")
	g.Expect(hr.GetNamespace()).To(Equal("clusters"))
	ref, _, _ := unstructured.NestedSlice(hr.Object, "spec", "valuesFrom")
	g.Expect(ref[0].(map[string]any)["name"]).To(Equal(cm.GetName()), "kustomize rewrites the reference to the hashed name")
	values, _, _ := unstructured.NestedMap(hr.Object, "spec", "values")
	g.Expect(values).To(Equal(map[string]any{"region": "eu-west", "secretThing": "s3cr3t"}), "substituteFrom Secret and a default")
}

func TestBuildWithoutKustomization(t *testing.T) {
	g := NewWithT(t)
	root := fleet(t)
	objs, err := Build(context.Background(), fake.NewClientBuilder().Build(), root, filepath.Join(root, "base"), nil)
	g.Expect(err).NotTo(HaveOccurred())
	hr := byKind(objs, "HelmRelease")
	g.Expect(hr.GetName()).To(Equal("${cluster_name}"), "no postBuild: no substitution")
	g.Expect(hr.GetNamespace()).To(BeEmpty())
}

func TestBuildErrors(t *testing.T) {
	root := fleet(t)
	c := fake.NewClientBuilder().Build()
	missing := &kustomizev1.Kustomization{ObjectMeta: metav1.ObjectMeta{Namespace: "fleet", Name: "production"},
		Spec: kustomizev1.KustomizationSpec{PostBuild: &kustomizev1.PostBuild{
			SubstituteFrom: []kustomizev1.SubstituteReference{{Kind: "ConfigMap", Name: "cluster-vars"}}}}}
	for name, tc := range map[string]struct {
		dir  string
		ks   *kustomizev1.Kustomization
		want string
	}{
		"outside the root":        {dir: t.TempDir(), want: "outside the repository root"},
		"not a folder":            {dir: filepath.Join(root, "base/values.yaml"), want: "not a folder"},
		"missing":                 {dir: filepath.Join(root, "nope"), want: "no such file"},
		"a base outside the root": {dir: filepath.Join(root, "outside"), want: "kustomize build of"},
		"a missing substituteFrom": {dir: filepath.Join(root, "overlays/production"), ks: missing,
			want: "substitute from 'ConfigMap/cluster-vars'"},
	} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			_, err := Build(context.Background(), c, root, tc.dir, tc.ks)
			g.Expect(err).To(MatchError(ContainSubstring(tc.want)))
		})
	}
}
