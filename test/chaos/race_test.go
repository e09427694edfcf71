package chaos

import (
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/templatedrift/template-drift-controller/internal/testenv"
	"github.com/templatedrift/template-drift-controller/test/scale"
)

func TestSetBack(t *testing.T) {
	g := NewWithT(t)
	m := &unstructured.Unstructured{Object: map[string]any{}}
	m.SetKind("Metal3MachineTemplate")
	_ = unstructured.SetNestedField(m.Object, testenv.Bootstrap.ImageURL, append(imagePath, "url")...)
	g.Expect(setImageBack(m)).To(BeFalse(), "not corrected yet: nothing to set back")
	g.Expect(stillSetBack(m)).To(BeTrue())
	_ = unstructured.SetNestedField(m.Object, testenv.Management.ImageURL, append(imagePath, "url")...)
	g.Expect(stillSetBack(m)).To(BeFalse())
	g.Expect(setImageBack(m)).To(BeTrue())
	checksum, _, _ := unstructured.NestedString(m.Object, append(imagePath, "checksum")...)
	g.Expect(checksum).To(Equal(testenv.Bootstrap.ImageURL + ".sha256sum"))
	g.Expect(stillSetBack(m)).To(BeTrue())

	k := &unstructured.Unstructured{Object: map[string]any{}}
	k.SetKind("KubeadmControlPlane")
	_ = unstructured.SetNestedField(k.Object, "mgmt-cp", cpRefPath...)
	g.Expect(setRefBack(k)).To(BeFalse())
	g.Expect(stillSetBack(k)).To(BeTrue())
	_ = unstructured.SetNestedField(k.Object, "mgmt-cp-0123456789", cpRefPath...)
	g.Expect(stillSetBack(k)).To(BeFalse())
	g.Expect(setRefBack(k)).To(BeTrue())
	ref, _, _ := unstructured.NestedString(k.Object, cpRefPath...)
	g.Expect(ref).To(Equal("mgmt-cp"))
}

func TestRaceTargetsOf(t *testing.T) {
	g := NewWithT(t)
	f := Fleet{Cases: map[string]Case{}}
	for i := range 100 {
		f.Cases[scale.Namespace(i)] = CaseOf(i)
	}
	targets := raceTargetsOf(f, 100)
	g.Expect(targets).To(HaveLen(2 * raceTargets))
	g.Expect(targets[0].key).To(Equal(ObjectKey{"fleet-0000", "Metal3MachineTemplate", "mgmt-md0"}))
	g.Expect(targets[1].key).To(Equal(ObjectKey{"fleet-0001", "KubeadmControlPlane", "mgmt-cp"}))
}
