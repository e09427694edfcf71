package framework

import (
	"regexp"
	"testing"

	. "github.com/onsi/gomega"
)

const chartDir = "../testdata/charts/cluster"

var nameRE = regexp.MustCompile(`(?m)^kind: (\w+)\nmetadata:\n  name: (\S+)`)

func names(t *testing.T, values map[string]any) map[string][]string {
	t.Helper()
	out, err := RenderChart(chartDir, values)
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	got := map[string][]string{}
	for _, doc := range out {
		for _, m := range nameRE.FindAllStringSubmatch(doc, -1) {
			got[m[1]] = append(got[m[1]], m[2])
		}
	}
	return got
}

// TestChartNames checks the e2e chart hashes template names the way Sylva
// does: the image URL and the image server IP are left out of the hash
// (so the pivot changes content under the same names), the kubelet args are
// in it (so an upgrade renames the KubeadmConfigTemplate).
func TestChartNames(t *testing.T) {
	g := NewWithT(t)
	base := names(t, nil)
	g.Expect(base["Metal3MachineTemplate"]).To(HaveLen(2))
	g.Expect(base["Metal3DataTemplate"]).To(HaveLen(2))
	g.Expect(base["KubeadmConfigTemplate"]).To(ConsistOf(MatchRegexp(`^mgmt-md0-[0-9a-f]{10}$`)))
	moved := names(t, map[string]any{"imageURL": "http://10.10.10.17/images/ubuntu.qcow2", "imageServerIP": "10.10.10.17"})
	g.Expect(moved).To(Equal(base))
	upgraded := names(t, map[string]any{"kubeletArgs": map[string]any{"max-pods": "200"}})
	g.Expect(upgraded["KubeadmConfigTemplate"]).NotTo(Equal(base["KubeadmConfigTemplate"]))
	g.Expect(upgraded["Metal3MachineTemplate"]).To(Equal(base["Metal3MachineTemplate"]))
	locked := names(t, map[string]any{"lockedPool": true})
	g.Expect(locked["LockedMachineTemplate"]).To(ConsistOf("mgmt-locked"), "the image URL is not hashed: the pivot changes it under the same name")
	g.Expect(locked["MachineDeployment"]).To(ConsistOf("mgmt-md0", "mgmt-locked"))
}
