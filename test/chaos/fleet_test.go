package chaos

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
)

func TestCaseOf(t *testing.T) {
	g := NewWithT(t)
	var got []Case
	for i := range 6 {
		got = append(got, CaseOf(i))
	}
	g.Expect(got).To(Equal([]Case{CaseInPlace, CaseRotate, CaseRecreate, CaseInPlace, CaseRotate, CaseRecreate}))
}

func TestManifests(t *testing.T) {
	tests := []struct {
		// c is the case rendered.
		c Case
		// method is Helm's apply method.
		method string
		// kinds are the manifest's templates and consumers.
		kinds []string
		// liveHas is in the live objects and not in the release manifest.
		liveHas string
	}{
		{c: CaseInPlace, method: "csa", liveHas: "10.10.10.17/images",
			kinds: []string{"MachineDeployment", "KubeadmControlPlane", "KubeadmConfigTemplate", "Metal3MachineTemplate", "Metal3MachineTemplate", "Metal3DataTemplate"}},
		{c: CaseRotate, method: "csa", liveHas: `image: "http://10.10.10.17`,
			kinds: []string{"MachineDeployment", "KubeadmControlPlane", "KubeadmConfigTemplate", "Metal3MachineTemplate", "LockedMachineTemplate", "Metal3DataTemplate"}},
		{c: CaseRecreate, method: "ssa", liveHas: `image: "http://10.10.10.17`,
			kinds: []string{"MachineDeployment", "KubeadmControlPlane", "KubeadmConfigTemplate", "Metal3MachineTemplate", "Metal3MachineTemplate", "Metal3DataTemplate", "LockedMachineTemplate"}},
	}
	for _, tt := range tests {
		t.Run(string(tt.c), func(t *testing.T) {
			g := NewWithT(t)
			live, desired, method := Manifests(tt.c)
			g.Expect(method).To(Equal(tt.method))
			g.Expect(live).To(ContainSubstring(tt.liveHas))
			g.Expect(desired).NotTo(ContainSubstring("10.10.10.17/images"))
			objs, err := ManifestObjects("ns", desired)
			g.Expect(err).NotTo(HaveOccurred())
			var kinds []string
			for _, o := range objs {
				g.Expect(o.Namespace).To(Equal("ns"))
				kinds = append(kinds, o.Kind)
			}
			g.Expect(kinds).To(Equal(tt.kinds))
			g.Expect(strings.Count(live, "\n---\n")).To(Equal(strings.Count(desired, "\n---\n")))
		})
	}
}

func TestManagedManifests(t *testing.T) {
	for _, c := range Cases {
		t.Run(string(c), func(t *testing.T) {
			g := NewWithT(t)
			live, desired, method := ManagedManifests(c)
			plainLive, plainDesired, plainMethod := Manifests(c)
			g.Expect(live).To(Equal(plainLive), "the live objects are the plain fleet's")
			g.Expect(method).To(Equal(plainMethod))
			g.Expect(live).To(ContainSubstring(`{key: image-server, value: "10.10.10.17"}`))
			if method == "ssa" {
				g.Expect(desired).To(Equal(plainDesired), "Helm would set a repointed reference back: no data template drift")
				return
			}
			g.Expect(desired).To(ContainSubstring(`{key: image-server, value: "` + managedMetadataIP + `"}`))
			g.Expect(desired).NotTo(ContainSubstring(`value: "10.10.10.17"`))
			g.Expect(strings.Replace(desired, `value: "`+managedMetadataIP+`"`, `value: "10.10.10.17"`, 1)).To(Equal(plainDesired), "only the data template's metaData differs")
		})
	}
}
