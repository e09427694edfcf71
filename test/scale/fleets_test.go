package scale

import (
	"path"
	"reflect"
	"slices"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/testenv"
)

// TestFleets checks each fleet's shape: its releases render the templates
// and drifts it announces, and its API server serves every kind they
// render, and none of the kinds it names as missing.
func TestFleets(t *testing.T) {
	cases := []struct {
		fleet string
		// drifted are the templates the pivot drifts.
		drifted []string
		// kinds are every kind a release renders.
		kinds []string
	}{
		{fleet: "full", drifted: []string{"Metal3MachineTemplate/mgmt-cp", "Metal3MachineTemplate/mgmt-md0"},
			kinds: []string{"Cluster", "MachineDeployment", "KubeadmControlPlane", "KubeadmConfigTemplate", "Metal3MachineTemplate", "Metal3DataTemplate"}},
		{fleet: "kubeadm-metal3", drifted: []string{"Metal3MachineTemplate/mgmt-cp", "Metal3MachineTemplate/mgmt-md0"},
			kinds: []string{"Cluster", "MachineDeployment", "KubeadmControlPlane", "KubeadmConfigTemplate", "Metal3MachineTemplate", "Metal3DataTemplate"}},
		{fleet: "rke2-metal3", drifted: []string{"Metal3MachineTemplate/mgmt-cp", "Metal3MachineTemplate/mgmt-md0"},
			kinds: []string{"Cluster", "MachineDeployment", "RKE2ControlPlane", "Metal3MachineTemplate", "Metal3DataTemplate"}},
		{fleet: "capi-locked", drifted: []string{"LockedMachineTemplate/mgmt-cp", "LockedMachineTemplate/mgmt-md0"},
			kinds: []string{"Cluster", "MachineDeployment", "KubeadmControlPlane", "KubeadmConfigTemplate", "LockedMachineTemplate"}},
	}
	g := NewWithT(t)
	g.Expect(cases).To(HaveLen(len(Fleets)), "every fleet has a case")
	for _, tc := range cases {
		t.Run(tc.fleet, func(t *testing.T) {
			g := NewWithT(t)
			f, err := FleetNamed(tc.fleet)
			g.Expect(err).NotTo(HaveOccurred())
			desired := templates(t, f.Render(testenv.Management))
			pivoted := templates(t, f.Render(testenv.Bootstrap))
			g.Expect(desired).To(HaveLen(f.Templates))
			var drifted []string
			for name, o := range desired {
				g.Expect(pivoted).To(HaveKey(name))
				if !reflect.DeepEqual(o.Object, pivoted[name].Object) {
					drifted = append(drifted, name)
				}
			}
			g.Expect(drifted).To(ConsistOf(tc.drifted))
			g.Expect(drifted).To(HaveLen(f.Drifted))

			objs, err := manifest.Split(f.Render(testenv.Management), "fleet-0000", 0)
			g.Expect(err).NotTo(HaveOccurred())
			var kinds []string
			for _, o := range objs {
				gk := o.GroupVersionKind().GroupKind()
				if !slices.Contains(kinds, gk.Kind) {
					kinds = append(kinds, gk.Kind)
				}
				for _, omitted := range f.Omit {
					ok, _ := path.Match(omitted.Kind, gk.Kind)
					g.Expect(ok && omitted.Group == gk.Group).To(BeFalse(), "the fleet renders %s, which its API server does not serve", gk)
				}
			}
			g.Expect(kinds).To(ConsistOf(tc.kinds))
			g.Expect(f.React.GVK.Kind).To(BeElementOf(kinds))
		})
	}
}
