package target

import (
	"maps"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/templatedrift/template-drift-controller/internal/manifest"
)

// slimObject is an object as the API server serves it: metadata with
// managedFields, a spec with more than the references, and a status.
func slimObject(apiVersion, kind string, spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": apiVersion, "kind": kind,
		"metadata": map[string]any{"name": "cp", "namespace": "fleet", "uid": "u1", "resourceVersion": "7", "generation": int64(3),
			"labels":            map[string]any{"cluster.x-k8s.io/cluster-name": "mgmt"},
			"annotations":       map[string]any{"meta.helm.sh/release-name": "cluster", "meta.helm.sh/release-namespace": "fleet", "cluster.x-k8s.io/paused": ""},
			"ownerReferences":   []any{map[string]any{"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster", "name": "mgmt", "uid": "c1"}},
			"finalizers":        []any{"kubeadm.controlplane.cluster.x-k8s.io"},
			"deletionTimestamp": "2026-12-03T10:00:00Z",
			"managedFields":     []any{map[string]any{"manager": "helm", "operation": "Update"}}},
		"spec":   spec,
		"status": map[string]any{"replicas": int64(3), "conditions": []any{map[string]any{"type": "Ready", "status": "True"}}},
	}}
}

// TestSlimKeepsWhatPassesRead: a slimmed Cluster, consumer or holder keeps
// its identity, version, annotations, owners, deletion state and the spec
// paths a pass reads, so the references found in it are those of the
// whole object; it drops the rest of the spec, the status and
// managedFields; slimming it again changes nothing. Templates and other
// kinds are kept whole but for managedFields. Every object is kept
// compact, with only its key and version decoded and its Helm release
// readable, and expands to the slim or whole object.
func TestSlimKeepsWhatPassesRead(t *testing.T) {
	ref := func(kind, name string) map[string]any {
		return map[string]any{"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": kind, "name": name}
	}
	kcpSpec := map[string]any{"version": "v1.34.1", "replicas": int64(3),
		"kubeadmConfigSpec": map[string]any{"files": []any{map[string]any{"path": "/etc/x", "content": "a long script"}}},
		"machineTemplate": map[string]any{"spec": map[string]any{"infrastructureRef": ref("Metal3MachineTemplate", "mgmt-cp"),
			"nodeDrainTimeoutSeconds": int64(60)}}}
	mdSpec := map[string]any{"clusterName": "mgmt", "replicas": int64(2), "selector": map[string]any{},
		"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"a": "b"}}, "spec": map[string]any{
			"version": "v1.34.1", "clusterName": "mgmt",
			"infrastructureRef": ref("Metal3MachineTemplate", "mgmt-md0"),
			"bootstrap":         map[string]any{"configRef": map[string]any{"apiGroup": "bootstrap.cluster.x-k8s.io", "kind": "KubeadmConfigTemplate", "name": "mgmt-md0"}}}}}
	tests := []struct {
		name string
		obj  *unstructured.Unstructured
		// spec is the spec kept; nil keeps the object whole.
		spec map[string]any
	}{
		{"KubeadmControlPlane", slimObject("controlplane.cluster.x-k8s.io/v1beta2", "KubeadmControlPlane", kcpSpec),
			map[string]any{"machineTemplate": map[string]any{"spec": map[string]any{"infrastructureRef": ref("Metal3MachineTemplate", "mgmt-cp")}}}},
		{"MachineDeployment", slimObject("cluster.x-k8s.io/v1beta2", "MachineDeployment", mdSpec),
			map[string]any{"template": map[string]any{"spec": map[string]any{"infrastructureRef": ref("Metal3MachineTemplate", "mgmt-md0"),
				"bootstrap": map[string]any{"configRef": map[string]any{"apiGroup": "bootstrap.cluster.x-k8s.io", "kind": "KubeadmConfigTemplate", "name": "mgmt-md0"}}}}}},
		{"MachineSet", slimObject("cluster.x-k8s.io/v1beta2", "MachineSet", mdSpec),
			map[string]any{"template": map[string]any{"spec": map[string]any{"infrastructureRef": ref("Metal3MachineTemplate", "mgmt-md0"),
				"bootstrap": map[string]any{"configRef": map[string]any{"apiGroup": "bootstrap.cluster.x-k8s.io", "kind": "KubeadmConfigTemplate", "name": "mgmt-md0"}}}}}},
		{"Metal3DataClaim", slimObject("infrastructure.cluster.x-k8s.io/v1beta1", "Metal3DataClaim",
			map[string]any{"template": map[string]any{"name": "mgmt-md0-metadata"}}),
			map[string]any{"template": map[string]any{"name": "mgmt-md0-metadata"}}},
		{"Cluster", slimObject("cluster.x-k8s.io/v1beta2", "Cluster", map[string]any{"paused": true,
			"clusterNetwork":  map[string]any{"pods": map[string]any{"cidrBlocks": []any{"10.0.0.0/16"}}},
			"controlPlaneRef": map[string]any{"apiGroup": "controlplane.cluster.x-k8s.io", "kind": "KubeadmControlPlane", "name": "cp"}}),
			map[string]any{"paused": true}},
		{"a template", slimObject("infrastructure.cluster.x-k8s.io/v1beta1", "Metal3MachineTemplate",
			map[string]any{"template": map[string]any{"spec": map[string]any{"image": map[string]any{"url": "http://x"}, "dataTemplate": map[string]any{"name": "d"}}}}), nil},
		{"another kind", slimObject("example.com/v1", "Widget", map[string]any{"size": int64(3)}), nil},
	}
	templates, err := manifest.ParseKinds(manifest.DefaultTemplateKinds)
	if err != nil {
		t.Fatal(err)
	}
	transform := SlimTransform(templates.Match)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			whole := tt.obj.DeepCopy()
			wantRefs, err := manifest.References(whole)
			g.Expect(err).NotTo(HaveOccurred())
			out, err := transform(tt.obj.DeepCopy())
			g.Expect(err).NotTo(HaveOccurred())
			kept := out.(*unstructured.Unstructured)
			g.Expect(kept.Object).To(HaveKey(compactField), "every object is kept compact")
			g.Expect(kept.Object["metadata"]).To(Equal(map[string]any{"name": "cp", "namespace": "fleet", "resourceVersion": "7"}),
				"decoded: the informer's key and the version")
			name, ns := HelmOwner(kept)
			g.Expect([]string{name, ns}).To(Equal([]string{"cluster", "fleet"}), "Helm's ownership, which the watches' handler reads")
			g.Expect(kept.GetName()).To(Equal("cp"))
			slim := kept.DeepCopy()
			g.Expect(Expand(slim)).To(Succeed())
			g.Expect(slim.GetManagedFields()).To(BeEmpty())
			if tt.spec == nil {
				whole.SetManagedFields(nil)
				g.Expect(slim.Object).To(Equal(whole.Object), "kept whole")
				return
			}
			want := tt.spec
			if manifest.RollsMachines(whole.GroupVersionKind().GroupKind()) {
				// Also the Machines it has and its rollout status
				// (manifest.RolloutStatusPaths), not its conditions.
				g.Expect(slim.Object["status"]).To(Equal(map[string]any{"replicas": int64(3)}))
				if replicas, ok := whole.Object["spec"].(map[string]any)["replicas"]; ok {
					want = maps.Clone(want)
					want["replicas"] = replicas
				}
			} else {
				g.Expect(slim.Object).NotTo(HaveKey("status"))
			}
			g.Expect(slim.Object["spec"]).To(Equal(want))
			for _, get := range []func(*unstructured.Unstructured) any{
				func(u *unstructured.Unstructured) any { return u.GetName() },
				func(u *unstructured.Unstructured) any { return u.GetNamespace() },
				func(u *unstructured.Unstructured) any { return u.GetUID() },
				func(u *unstructured.Unstructured) any { return u.GetResourceVersion() },
				func(u *unstructured.Unstructured) any { return u.GetAnnotations() },
				func(u *unstructured.Unstructured) any { return u.GetLabels() },
				func(u *unstructured.Unstructured) any { return u.GetOwnerReferences() },
				func(u *unstructured.Unstructured) any { return u.GetFinalizers() },
				func(u *unstructured.Unstructured) any { return u.GetDeletionTimestamp() },
				func(u *unstructured.Unstructured) any { return u.GroupVersionKind() },
			} {
				g.Expect(get(slim)).To(Equal(get(whole)))
			}
			refs, err := manifest.References(slim)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(refs).To(Equal(wantRefs), "the references a pass finds")
			again, err := transform(kept.DeepCopy())
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(again.(*unstructured.Unstructured).Object).To(Equal(kept.Object), "transforming twice")
			slimAgain, err := transform(slim.DeepCopy())
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(Expand(slimAgain.(*unstructured.Unstructured))).To(Succeed())
			g.Expect(slimAgain.(*unstructured.Unstructured).Object).To(Equal(slim.Object), "slimming twice")
		})
	}
}

// TestSlimMetadataOnly: metadata-only objects (the release Secrets', the
// CRDs', the RBAC objects') lose only their managedFields.
func TestSlimMetadataOnly(t *testing.T) {
	g := NewWithT(t)
	obj := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "sh.helm.release.v1.cluster.v1", Labels: map[string]string{"owner": "helm"},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "helm"}}}}
	out, err := SlimTransform(func(schema.GroupKind) bool { return false })(obj)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out.(*metav1.PartialObjectMetadata).ManagedFields).To(BeEmpty())
	g.Expect(out.(*metav1.PartialObjectMetadata).Labels).To(Equal(map[string]string{"owner": "helm"}))
}
