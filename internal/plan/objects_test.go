package plan_test

import (
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/plan"
)

// desiredWithServerFields is a manifest object that (wrongly, or because it
// was read back) carries server-set metadata and a status: none of it may be
// copied into a created object.
const desiredWithServerFields = `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: Metal3MachineTemplate
metadata:
  name: workers
  namespace: fleet
  resourceVersion: "4242"
  uid: 0b8c9f7e-0000-4000-8000-000000000001
  creationTimestamp: "2024-01-01T00:00:00Z"
  generation: 7
  finalizers: [example.com/keep]
  managedFields:
  - manager: helm
    operation: Update
  labels:
    from-manifest: "yes"
  annotations:
    manifest-note: desired
    templatedrift.io/superseded-by: workers-0123456789
spec:
  template:
    spec:
      image:
        url: http://10.0.0.2/img
status:
  ready: true
`

// liveOriginal is the live template being replaced: Helm-owned, already
// marked by an earlier rotation, with the record of an earlier release's
// in-place correction.
const liveOriginal = `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: Metal3MachineTemplate
metadata:
  name: workers
  namespace: fleet
  resourceVersion: "99"
  uid: 0b8c9f7e-0000-4000-8000-000000000002
  creationTimestamp: "2023-01-01T00:00:00Z"
  labels:
    app.kubernetes.io/managed-by: Helm
    cluster.x-k8s.io/cluster-name: cluster-a
  annotations:
    meta.helm.sh/release-name: cluster-a
    meta.helm.sh/release-namespace: fleet
    templatedrift.io/superseded-by: workers-0123456789
    templatedrift.io/source-release: fleet/cluster-a.v1
    templatedrift.io/correction: in-place
    templatedrift.io/corrected-drift: 0000aaaa0000
    team: metal
  ownerReferences:
  - apiVersion: cluster.x-k8s.io/v1beta1
    kind: Cluster
    name: stale-owner
    uid: 0b8c9f7e-0000-4000-8000-00000000000f
spec:
  template:
    spec:
      image:
        url: http://10.0.0.1/img
status:
  ready: true
`

var (
	testRelease = plan.Release{Name: "cluster-a", Namespace: "fleet", Ref: "fleet/cluster-a.v3"}
	testOwners  = []metav1.OwnerReference{{APIVersion: "cluster.x-k8s.io/v1beta1", Kind: "Cluster", Name: "cluster-a", UID: "u-1"}}
)

// expectNoServerFields fails when obj carries metadata only the API server
// sets, or a status.
func expectNoServerFields(g Gomega, obj *unstructured.Unstructured) {
	g.ExpectWithOffset(1, obj.Object).NotTo(HaveKey("status"))
	meta, _ := obj.Object["metadata"].(map[string]any)
	for _, k := range []string{"resourceVersion", "uid", "creationTimestamp", "generation", "finalizers", "managedFields", "deletionTimestamp"} {
		g.ExpectWithOffset(1, meta).NotTo(HaveKey(k))
	}
}

func TestBuildReplacement(t *testing.T) {
	g := NewWithT(t)
	desired := fromYAML(t, desiredWithServerFields)
	original := fromYAML(t, liveOriginal)
	desiredBefore, originalBefore := desired.DeepCopy(), original.DeepCopy()

	obj := plan.BuildReplacement(desired, original, "workers-abcdef0123", testOwners, testRelease)

	g.Expect(obj.GetAPIVersion()).To(Equal("infrastructure.cluster.x-k8s.io/v1beta1"))
	g.Expect(obj.GetKind()).To(Equal("Metal3MachineTemplate"))
	g.Expect(obj.GetName()).To(Equal("workers-abcdef0123"))
	g.Expect(obj.GetNamespace()).To(Equal("fleet"))
	g.Expect(obj.Object["spec"]).To(Equal(desired.Object["spec"]))
	g.Expect(obj.GetLabels()).To(Equal(map[string]string{
		"app.kubernetes.io/managed-by":  "Helm",
		"cluster.x-k8s.io/cluster-name": "cluster-a",
	}), "labels come from the original, not the manifest")
	g.Expect(obj.GetAnnotations()).To(Equal(map[string]string{
		api.HelmReleaseNameAnnotation:      "cluster-a",
		api.HelmReleaseNamespaceAnnotation: "fleet",
		"team":                             "metal",
		api.ReplacesAnnotation:             "workers",
		api.SourceReleaseAnnotation:        "fleet/cluster-a.v3",
	}), "original's annotations, superseded-by and the correction record dropped, lineage set")
	g.Expect(obj.GetOwnerReferences()).To(Equal(testOwners), "owners are the ones passed, not the original's")
	expectNoServerFields(g, obj)

	g.Expect(desired).To(Equal(desiredBefore), "desired must not be mutated")
	g.Expect(original).To(Equal(originalBefore), "original must not be mutated")

	// The result shares no memory with its inputs.
	g.Expect(unstructured.SetNestedField(obj.Object, "changed", "spec", "template", "spec", "image", "url")).To(Succeed())
	g.Expect(desired).To(Equal(desiredBefore))
}

func TestBuildReplacementNamespaceFromOriginal(t *testing.T) {
	g := NewWithT(t)
	desired := fromYAML(t, `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: Metal3DataTemplate
metadata: {name: data}
spec: {clusterName: cluster-a}
`)
	original := fromYAML(t, `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: Metal3DataTemplate
metadata: {name: data, namespace: fleet}
spec: {clusterName: cluster-b}
`)
	obj := plan.BuildReplacement(desired, original, "data-0000000000", nil, testRelease)
	g.Expect(obj.GetNamespace()).To(Equal("fleet"))
	g.Expect(obj.GetOwnerReferences()).To(BeEmpty())
	g.Expect(obj.GetAnnotations()).To(Equal(map[string]string{
		api.ReplacesAnnotation:      "data",
		api.SourceReleaseAnnotation: "fleet/cluster-a.v3",
	}), "an original without annotations still gets the lineage")
}

func TestBuildRecreate(t *testing.T) {
	cases := []struct {
		name            string            // what the case proves
		original        string            // live original as YAML; "" for nil
		digest          string            // the plan's DriftDigest
		wantLabels      map[string]string // labels of the built object
		wantAnnotations map[string]string // annotations of the built object
	}{{
		name:     "from the live original: its metadata, superseded-by dropped, source-release and corrected drift set",
		original: liveOriginal,
		digest:   "5e1f00c0ffee",
		wantLabels: map[string]string{
			"app.kubernetes.io/managed-by":  "Helm",
			"cluster.x-k8s.io/cluster-name": "cluster-a",
		},
		wantAnnotations: map[string]string{
			api.HelmReleaseNameAnnotation:      "cluster-a",
			api.HelmReleaseNamespaceAnnotation: "fleet",
			"team":                             "metal",
			api.SourceReleaseAnnotation:        "fleet/cluster-a.v3",
			api.CorrectionAnnotation:           "recreate",
			api.CorrectedDriftAnnotation:       "5e1f00c0ffee",
		},
	}, {
		name:     "from the live original without a digest: the original's earlier digest is dropped",
		original: liveOriginal,
		wantLabels: map[string]string{
			"app.kubernetes.io/managed-by":  "Helm",
			"cluster.x-k8s.io/cluster-name": "cluster-a",
		},
		wantAnnotations: map[string]string{
			api.HelmReleaseNameAnnotation:      "cluster-a",
			api.HelmReleaseNamespaceAnnotation: "fleet",
			"team":                             "metal",
			api.SourceReleaseAnnotation:        "fleet/cluster-a.v3",
			api.CorrectionAnnotation:           "recreate",
		},
	}, {
		name: "original gone: manifest metadata plus Helm ownership",
		wantLabels: map[string]string{
			"from-manifest":        "yes",
			api.HelmManagedByLabel: "Helm",
		},
		wantAnnotations: map[string]string{
			"manifest-note":                    "desired",
			api.HelmReleaseNameAnnotation:      "cluster-a",
			api.HelmReleaseNamespaceAnnotation: "fleet",
			api.SourceReleaseAnnotation:        "fleet/cluster-a.v3",
			api.CorrectionAnnotation:           "recreate",
		},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			desired := fromYAML(t, desiredWithServerFields)
			desiredBefore := desired.DeepCopy()
			var original, originalBefore *unstructured.Unstructured
			if tc.original != "" {
				original = fromYAML(t, tc.original)
				originalBefore = original.DeepCopy()
			}

			obj := plan.BuildRecreate(desired, original, testOwners, testRelease, tc.digest)

			g.Expect(obj.GetName()).To(Equal("workers"), "same name as the manifest")
			g.Expect(obj.GetNamespace()).To(Equal("fleet"))
			g.Expect(obj.GetKind()).To(Equal("Metal3MachineTemplate"))
			g.Expect(obj.Object["spec"]).To(Equal(desiredBefore.Object["spec"]))
			g.Expect(obj.GetLabels()).To(Equal(tc.wantLabels))
			g.Expect(obj.GetAnnotations()).To(Equal(tc.wantAnnotations))
			g.Expect(obj.GetAnnotations()).NotTo(HaveKey(api.ReplacesAnnotation), "a recreate replaces nothing by name")
			g.Expect(obj.GetOwnerReferences()).To(Equal(testOwners))
			expectNoServerFields(g, obj)

			g.Expect(desired).To(Equal(desiredBefore), "desired must not be mutated")
			if original != nil {
				g.Expect(original).To(Equal(originalBefore), "original must not be mutated")
			}
		})
	}
}

func TestBuildRecreateOverridesManifestManagedBy(t *testing.T) {
	g := NewWithT(t)
	desired := fromYAML(t, `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: Metal3DataTemplate
metadata:
  name: data
  namespace: fleet
  labels: {app.kubernetes.io/managed-by: someone-else}
spec: {clusterName: cluster-a}
`)
	obj := plan.BuildRecreate(desired, nil, nil, testRelease, "")
	g.Expect(obj.GetLabels()).To(HaveKeyWithValue(api.HelmManagedByLabel, "Helm"))
	g.Expect(desired.GetLabels()).To(HaveKeyWithValue(api.HelmManagedByLabel, "someone-else"), "desired not mutated")
	g.Expect(obj.GetOwnerReferences()).To(BeEmpty())
}
