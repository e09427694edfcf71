package chaos

import (
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/templatedrift/template-drift-controller/api"
)

// obj builds a live object of kind in namespace ns with spec, and applies
// the options (annotations, deletion).
func obj(kind, name string, spec map[string]any, opts ...func(*unstructured.Unstructured)) unstructured.Unstructured {
	u := unstructured.Unstructured{Object: map[string]any{"kind": kind, "metadata": map[string]any{"name": name, "namespace": "ns"}}}
	if spec != nil {
		u.Object["spec"] = spec
	}
	for _, o := range opts {
		o(&u)
	}
	return u
}

func replaces(orig string) func(*unstructured.Unstructured) {
	return func(u *unstructured.Unstructured) { u.SetAnnotations(map[string]string{api.ReplacesAnnotation: orig}) }
}

func terminating(u *unstructured.Unstructured) {
	now := metav1.Now()
	u.SetDeletionTimestamp(&now)
}

func kcp(template string) unstructured.Unstructured {
	return obj("KubeadmControlPlane", "mgmt-cp", map[string]any{"machineTemplate": map[string]any{"spec": map[string]any{
		"infrastructureRef": map[string]any{"kind": "LockedMachineTemplate", "name": template}}}})
}

func m3mt(name, dataTemplate string) unstructured.Unstructured {
	return obj("Metal3MachineTemplate", name, map[string]any{"template": map[string]any{"spec": map[string]any{
		"dataTemplate": map[string]any{"name": dataTemplate}}}})
}

func TestCheckLive(t *testing.T) {
	fleet := Fleet{Objects: []ObjectKey{{"ns", "LockedMachineTemplate", "mgmt-cp"}, {"ns", "KubeadmControlPlane", "mgmt-cp"}}}
	tests := []struct {
		name string
		// objs are the live objects.
		objs []unstructured.Unstructured
		// want are the violations, in order.
		want []string
	}{
		{name: "a rotation done", objs: []unstructured.Unstructured{
			kcp("mgmt-cp-0123456789"), obj("LockedMachineTemplate", "mgmt-cp", nil),
			obj("LockedMachineTemplate", "mgmt-cp-0123456789", nil, replaces("mgmt-cp"))}},
		{name: "a duplicate replacement, one of them an orphan", objs: []unstructured.Unstructured{
			kcp("mgmt-cp-0123456789"), obj("LockedMachineTemplate", "mgmt-cp", nil),
			obj("LockedMachineTemplate", "mgmt-cp-0123456789", nil, replaces("mgmt-cp")),
			obj("LockedMachineTemplate", "mgmt-cp-abcdefabcd", nil, replaces("mgmt-cp"))},
			want: []string{
				"complete: LockedMachineTemplate ns/mgmt-cp-abcdefabcd, a replacement of mgmt-cp, is an orphan: nothing uses it",
				"unique: LockedMachineTemplate ns/mgmt-cp has 2 replacements: mgmt-cp-0123456789, mgmt-cp-abcdefabcd",
			}},
		{name: "a reference to a missing replacement", objs: []unstructured.Unstructured{kcp("mgmt-cp-0123456789"), obj("LockedMachineTemplate", "mgmt-cp", nil)},
			want: []string{"unique: a consumer names LockedMachineTemplate ns/mgmt-cp-0123456789, which does not exist"}},
		{name: "a recreate cut between its delete and its create", objs: []unstructured.Unstructured{kcp("mgmt-cp-0123456789"),
			obj("LockedMachineTemplate", "mgmt-cp-0123456789", nil, replaces("mgmt-cp"))},
			want: []string{"complete: LockedMachineTemplate ns/mgmt-cp of the release manifest is missing"}},
		{name: "terminating, and a stored probe", objs: []unstructured.Unstructured{kcp("mgmt-cp"),
			obj("LockedMachineTemplate", "mgmt-cp", nil, terminating), obj("LockedMachineTemplate", "mgmt-cp-tdc-probe", nil)},
			want: []string{
				"complete: LockedMachineTemplate ns/mgmt-cp is Terminating (finalizers [])",
				"complete: LockedMachineTemplate ns/mgmt-cp-tdc-probe is a dry-run probe, stored",
			}},
		{name: "a data template reference", objs: []unstructured.Unstructured{kcp("mgmt-cp"), obj("LockedMachineTemplate", "mgmt-cp", nil),
			m3mt("mgmt-md0", "mgmt-md0-metadata")},
			want: []string{"unique: a consumer names Metal3DataTemplate ns/mgmt-md0-metadata, which does not exist"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			got := violationStrings(CheckLive(tt.objs, fleet))
			g.Expect(got).To(Equal(tt.want))
		})
	}
}

func TestReferences(t *testing.T) {
	g := NewWithT(t)
	md := obj("MachineDeployment", "mgmt-md0", map[string]any{"template": map[string]any{"spec": map[string]any{
		"infrastructureRef": map[string]any{"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "Metal3MachineTemplate", "name": "mgmt-md0"},
		"bootstrap":         map[string]any{"configRef": map[string]any{"kind": "KubeadmConfigTemplate", "name": "mgmt-md0"}}}}})
	g.Expect(References(&md)).To(Equal([]ObjectKey{{"ns", "Metal3MachineTemplate", "mgmt-md0"}, {"ns", "KubeadmConfigTemplate", "mgmt-md0"}}))
	c := obj("Cluster", "mgmt", map[string]any{})
	g.Expect(References(&c)).To(BeEmpty())
}

// violationStrings are vs as the matrix prints them, for a table's want.
func violationStrings(vs []Violation) []string {
	var out []string
	for _, v := range vs {
		out = append(out, v.String())
	}
	return out
}
