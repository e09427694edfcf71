package scale

import (
	"reflect"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/testenv"
)

// templates parses a fleet manifest and returns its templates by
// "Kind/name", with the template kinds the controller corrects by default.
func templates(t *testing.T, rendered string) map[string]*unstructured.Unstructured {
	t.Helper()
	kinds, err := manifest.ParseKinds(manifest.DefaultTemplateKinds)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := manifest.Split(rendered, "fleet-0000", 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*unstructured.Unstructured{}
	for _, o := range objs {
		if kinds.Match(o.GroupVersionKind().GroupKind()) {
			out[o.GetKind()+"/"+o.GetName()] = o
		}
	}
	return out
}

func TestFleetManifestHasFourTemplatesTwoDrifted(t *testing.T) {
	g := NewWithT(t)
	desired := templates(t, FleetManifest(testenv.Management))
	pivoted := templates(t, FleetManifest(testenv.Bootstrap))

	g.Expect(desired).To(HaveLen(TemplatesPerRelease))
	g.Expect(pivoted).To(HaveLen(TemplatesPerRelease))
	var drifted []string
	for name, o := range desired {
		if !reflect.DeepEqual(o.Object, pivoted[name].Object) {
			drifted = append(drifted, name)
		}
	}
	g.Expect(drifted).To(ConsistOf("Metal3MachineTemplate/mgmt-cp", "Metal3MachineTemplate/mgmt-md0"))
	g.Expect(drifted).To(HaveLen(DriftedPerRelease))
}

func TestFleetManifestNamesNoMissingDataTemplate(t *testing.T) {
	g := NewWithT(t)
	rendered := FleetManifest(testenv.Management)

	g.Expect(rendered).NotTo(ContainSubstring("mgmt-cp-metadata"))
	g.Expect(rendered).NotTo(ContainSubstring("format:"), "v1beta1's image.format does not survive None conversion")
	g.Expect(strings.Count(rendered, "dataTemplate: {name: mgmt-md0-metadata}")).To(Equal(2))
	g.Expect(strings.Count(rendered, "# Source:")).To(Equal(7), "the fixture's eight objects, one data template left out")
}

func TestDriftedIsHalfTheFleet(t *testing.T) {
	g := NewWithT(t)
	n := 0
	for i := range 100 {
		if Drifted(i) {
			n++
		}
	}
	g.Expect(n).To(Equal(50))
	g.Expect(Drifted(1)).To(BeFalse(), "the reaction drifts release 1, which must start in sync")
	g.Expect(Namespace(7)).To(Equal("fleet-0007"))
}
