package chaos

import (
	"testing"

	. "github.com/onsi/gomega"

	"github.com/templatedrift/template-drift-controller/test/harness"
)

// writeOf is a write of verb to resource ns/name.
func writeOf(verb, resource, ns, name string, code int) Write {
	c := harness.Call{Verb: verb, ObjectRef: harness.ObjectRef{Resource: resource, Namespace: ns, Name: name}}
	c.ResponseStatus.Code = code
	return Write{c}
}

func TestCheckClaimed(t *testing.T) {
	claimed := map[ObjectKey]string{{Namespace: "a", Kind: "Metal3DataTemplate", Name: "mgmt-md0-metadata"}: "a/mgmt-md0-0"}
	tests := []struct {
		name   string
		writes []Write
		want   []string
	}{
		{name: "no delete", writes: []Write{writeOf("create", "metal3datatemplates", "a", "mgmt-md0-metadata-1a2b3c4d5e", 201), writeOf("patch", "metal3machinetemplates", "a", "mgmt-md0", 200)}},
		{name: "an unclaimed data template deleted", writes: []Write{writeOf("delete", "metal3datatemplates", "a", "spare-data", 200)}},
		{name: "the claimed name deleted in another namespace", writes: []Write{writeOf("delete", "metal3datatemplates", "b", "mgmt-md0-metadata", 200)}},
		{name: "a machine template of the same name deleted", writes: []Write{writeOf("delete", "metal3machinetemplates", "a", "mgmt-md0-metadata", 200)}},
		{name: "the claimed template deleted", writes: []Write{writeOf("delete", "metal3datatemplates", "a", "mgmt-md0-metadata", 200)},
			want: []string{"claimed: delete metal3datatemplates a/mgmt-md0-metadata (HTTP 200) while Metal3DataClaim a/mgmt-md0-0 names it"}},
		{name: "asked and refused: still a violation", writes: []Write{writeOf("delete", "metal3datatemplates", "a", "mgmt-md0-metadata", 409)},
			want: []string{"claimed: delete metal3datatemplates a/mgmt-md0-metadata (HTTP 409) while Metal3DataClaim a/mgmt-md0-0 names it"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			got := violationStrings(CheckClaimed(tt.writes, claimed))
			g.Expect(got).To(Equal(tt.want))
		})
	}
}

func TestCheckRolls(t *testing.T) {
	ms := func(ns, name string) ObjectKey { return ObjectKey{Namespace: ns, Kind: "MachineSet", Name: name} }
	before := map[ObjectKey]bool{ms("a", "mgmt-md0-x"): true, ms("b", "mgmt-md0-y"): true}
	tests := []struct {
		name      string
		now       []ObjectKey
		announced map[string]bool
		want      int
	}{
		{name: "the same MachineSets", now: []ObjectKey{ms("a", "mgmt-md0-x"), ms("b", "mgmt-md0-y")}},
		{name: "one gone (scaled away): no roll", now: []ObjectKey{ms("a", "mgmt-md0-x")}},
		{name: "a new one, announced", now: []ObjectKey{ms("a", "mgmt-md0-x"), ms("a", "mgmt-md0-z")}, announced: map[string]bool{"a": true}},
		{name: "a new one, not announced", now: []ObjectKey{ms("a", "mgmt-md0-x"), ms("a", "mgmt-md0-z")}, want: 1},
		{name: "a new one, announced in another namespace", now: []ObjectKey{ms("b", "mgmt-md0-z")}, announced: map[string]bool{"a": true}, want: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			vs := CheckRolls(before, tt.now, tt.announced)
			g.Expect(vs).To(HaveLen(tt.want))
			for _, v := range vs {
				g.Expect(v.Invariant).To(Equal(InvAnnouncedRolls))
				g.Expect(v.What).To(ContainSubstring(rollsYes))
			}
		})
	}
}
