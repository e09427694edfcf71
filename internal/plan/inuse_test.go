package plan_test

import (
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/plan"
)

// Users of templates, as the gatherer lists them: consumers (MachineDeployment,
// KubeadmControlPlane, RKE2ControlPlane) and holders (MachineSet,
// Metal3DataClaim, Metal3Data). The MachineDeployment is consumers_test.go's
// mdV1beta2.
const (
	userMS = `
apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineSet
metadata: {name: md-0-abcde, namespace: fleet}
spec:
  template:
    spec:
      infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: Metal3MachineTemplate, name: workers}
`
	userForeignKCP = `
apiVersion: controlplane.cluster.x-k8s.io/v1beta2
kind: KubeadmControlPlane
metadata: {name: cp-other, namespace: fleet}
spec:
  machineTemplate:
    spec:
      infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: Metal3MachineTemplate, name: workers}
`
	// Both RKE2 fields name the same template: one user, two references.
	userRKE2Twice = `
apiVersion: controlplane.cluster.x-k8s.io/v1beta1
kind: RKE2ControlPlane
metadata: {name: rke2, namespace: fleet}
spec:
  infrastructureRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: Metal3MachineTemplate, name: workers}
  machineTemplate:
    infrastructureRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: Metal3MachineTemplate, name: workers}
`
	// The bootstrap reference is of this namespace, the infrastructure one
	// is not: the whole object is skipped.
	userCrossNamespace = `
apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineDeployment
metadata: {name: md-x, namespace: fleet}
spec:
  template:
    spec:
      bootstrap:
        configRef: {apiGroup: bootstrap.cluster.x-k8s.io, kind: KubeadmConfigTemplate, name: workers}
      infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: Metal3MachineTemplate, name: workers, namespace: tenant-b}
`
	userClaim = `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: Metal3DataClaim
metadata: {name: workers-abc12, namespace: fleet}
spec: {template: {name: workers-data}}
`
	userData = `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: Metal3Data
metadata: {name: workers-data-0, namespace: fleet}
spec: {template: {name: workers-data}}
`
	userNoRefs = `
apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineDeployment
metadata: {name: md-empty, namespace: fleet}
spec: {replicas: 0}
`
	userConfigMap = `
apiVersion: v1
kind: ConfigMap
metadata: {name: cm, namespace: fleet}
data: {infrastructureRef: workers}
`
)

func TestIndexUsers(t *testing.T) {
	m3mt := id(manifest.Metal3MachineTemplateKind, "fleet", "workers")
	boot := id(bootstrapKind, "fleet", "workers")
	data := id(manifest.Metal3DataTemplateKind, "fleet", "workers-data")
	md := id(manifest.MachineDeploymentKind, "fleet", "md-0")
	ms := id(manifest.MachineSetKind, "fleet", "md-0-abcde")
	kcp := id(manifest.KubeadmControlPlaneKind, "fleet", "cp-other")
	rke2 := id(manifest.RKE2ControlPlaneKind, "fleet", "rke2")
	claim := id(manifest.Metal3DataClaimKind, "fleet", "workers-abc12")
	m3data := id(manifest.Metal3DataKind, "fleet", "workers-data-0")

	mdRefs := []manifest.Ref{
		{Pointer: "/spec/template/spec/infrastructureRef/name", Template: m3mt},
		{Pointer: "/spec/template/spec/bootstrap/configRef/name", Template: boot},
	}
	msRefs := []manifest.Ref{{Pointer: "/spec/template/spec/infrastructureRef/name", Template: m3mt}}
	kcpRefs := []manifest.Ref{{Pointer: "/spec/machineTemplate/spec/infrastructureRef/name", Template: m3mt}}
	rke2Refs := []manifest.Ref{
		{Pointer: "/spec/infrastructureRef/name", Template: m3mt},
		{Pointer: "/spec/machineTemplate/infrastructureRef/name", Template: m3mt},
	}
	claimRefs := []manifest.Ref{{Pointer: "/spec/template/name", Template: data}}
	dataRefs := []manifest.Ref{{Pointer: "/spec/template/name", Template: data}}

	cases := []struct {
		name string               // what the case proves
		objs []string             // live objects as YAML, in the order listed
		own  map[manifest.ID]bool // the release's objects
		want plan.Users           // the whole index
	}{{
		name: "own and foreign users of one template, sorted by ID whatever the input order",
		objs: []string{userMS, userForeignKCP, mdV1beta2},
		own:  map[manifest.ID]bool{md: true},
		want: plan.Users{
			m3mt: {
				{ID: kcp, Refs: kcpRefs},
				{ID: md, Refs: mdRefs, Own: true},
				{ID: ms, Refs: msRefs},
			},
			boot: {{ID: md, Refs: mdRefs, Own: true}},
		},
	}, {
		name: "an object naming the same template twice is one user of it, with both references",
		objs: []string{userRKE2Twice},
		want: plan.Users{m3mt: {{ID: rke2, Refs: rke2Refs}}},
	}, {
		name: "an object with a reference into another namespace is skipped, its same-namespace reference too",
		objs: []string{userCrossNamespace, userMS},
		want: plan.Users{m3mt: {{ID: ms, Refs: msRefs}}},
	}, {
		name: "holders of a data template: claims and Metal3Data name it by name only",
		objs: []string{userData, userClaim},
		own:  map[manifest.ID]bool{claim: true},
		want: plan.Users{data: {
			{ID: m3data, Refs: dataRefs},
			{ID: claim, Refs: claimRefs, Own: true},
		}},
	}, {
		name: "objects without references, and kinds that hold none, index nothing",
		objs: []string{userNoRefs, userConfigMap},
		want: plan.Users{},
	}, {
		name: "no objects: an empty index, not nil",
		want: plan.Users{},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			var objs []*unstructured.Unstructured
			for _, y := range tc.objs {
				objs = append(objs, fromYAML(t, y))
			}
			got := plan.IndexUsers(objs, tc.own)
			g.Expect(got).NotTo(BeNil())
			g.Expect(got).To(Equal(tc.want))
		})
	}
}

func TestUsersForeign(t *testing.T) {
	target := id(manifest.Metal3MachineTemplateKind, "fleet", "workers")
	user := func(of manifest.ID, own bool) plan.User { return plan.User{ID: of, Own: own} }
	md := id(manifest.MachineDeploymentKind, "fleet", "md-other")
	mp := id(manifest.MachinePoolKind, "fleet", "mp-other")
	kcp := id(manifest.KubeadmControlPlaneKind, "fleet", "cp-other")
	rke2 := id(manifest.RKE2ControlPlaneKind, "fleet", "rke2-other")
	m3mt := id(manifest.Metal3MachineTemplateKind, "fleet", "other-workers")
	ms := id(manifest.MachineSetKind, "fleet", "md-other-abcde")
	claim := id(manifest.Metal3DataClaimKind, "fleet", "claim-0")
	data := id(manifest.Metal3DataKind, "fleet", "data-0")

	cases := []struct {
		name  string        // what the case proves
		users []plan.User   // the users of target, as IndexUsers sorted them
		want  []manifest.ID // Foreign(target)
	}{{
		name:  "every consumer kind outside the release counts, in the index's order",
		users: []plan.User{user(kcp, false), user(md, false), user(mp, false), user(m3mt, false), user(rke2, false)},
		want:  []manifest.ID{kcp, md, mp, m3mt, rke2},
	}, {
		name:  "the release's own consumers never count",
		users: []plan.User{user(kcp, true), user(md, true), user(mp, true), user(m3mt, true)},
	}, {
		name:  "holders never count, own or not: Cluster API and CAPM3 replace them",
		users: []plan.User{user(ms, false), user(claim, false), user(data, false), user(ms, true)},
	}, {
		name:  "a mix: only the foreign consumer",
		users: []plan.User{user(id(manifest.MachineDeploymentKind, "fleet", "md-0"), true), user(md, false), user(ms, false)},
		want:  []manifest.ID{md},
	}, {
		name: "a template nothing uses",
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			u := plan.Users{}
			if tc.users != nil {
				u[target] = tc.users
			}
			got := u.Holders(target)
			if tc.want == nil {
				g.Expect(got).To(BeEmpty())
				return
			}
			g.Expect(got).To(Equal(tc.want))
		})
	}

	// Another template's users are not target's.
	g := NewWithT(t)
	u := plan.Users{id(manifest.Metal3MachineTemplateKind, "fleet", "other"): {user(md, false)}}
	g.Expect(u.Holders(target)).To(BeEmpty())
}

func TestDeleteBlocked(t *testing.T) {
	const (
		m3dt = `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: Metal3DataTemplate
metadata: {name: workers-data, namespace: fleet}
`
		m3mt = `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: Metal3MachineTemplate
metadata: {name: workers, namespace: fleet}
`
		capm3 = plan.Metal3DataTemplateFinalizer
		other = "example.com/protect"
	)
	md := plan.User{ID: id(manifest.MachineDeploymentKind, "fleet", "md-0"), Own: true}
	claim := func(name string) plan.User { return plan.User{ID: id(manifest.Metal3DataClaimKind, "fleet", name)} }
	m3data := plan.User{ID: id(manifest.Metal3DataKind, "fleet", "workers-data-0")}
	ms := plan.User{ID: id(manifest.MachineSetKind, "fleet", "md-0-abcde")}

	cases := []struct {
		name        string      // what the case proves
		live        string      // the template as YAML
		finalizers  []string    // set on live
		users       []plan.User // its users
		wantBlocked bool        // the delete would not complete at once
		wantMessage string      // the exact reason; "" when not blocked
	}{{
		name: "no user, no finalizer: the delete completes",
		live: m3mt,
	}, {
		name:        "one user blocks, and is named",
		live:        m3mt,
		users:       []plan.User{md},
		wantBlocked: true,
		wantMessage: "it is in use by MachineDeployment md-0",
	}, {
		name:        "a holder blocks like a consumer",
		live:        m3mt,
		users:       []plan.User{ms},
		wantBlocked: true,
		wantMessage: "it is in use by MachineSet md-0-abcde",
	}, {
		name:        "users of several kinds: one part per kind, kinds sorted",
		live:        m3mt,
		users:       []plan.User{ms, md},
		wantBlocked: true,
		wantMessage: "it is in use by MachineDeployment md-0, MachineSet md-0-abcde",
	}, {
		name:       "CAPM3's finalizer on a Metal3DataTemplate nothing names: released at once, not blocked",
		live:       m3dt,
		finalizers: []string{capm3},
	}, {
		name:        "CAPM3's finalizer on a Metal3DataTemplate with claims: blocked, for the claims and the finalizer",
		live:        m3dt,
		finalizers:  []string{capm3},
		users:       []plan.User{claim("workers-abc12")},
		wantBlocked: true,
		wantMessage: "it is in use by Metal3DataClaim workers-abc12; finalizer " + capm3 +
			" keeps it until no Metal3DataClaim or Metal3Data names it",
	}, {
		name:        "several claims are counted and the first by name is shown, whatever the order; Metal3Data sorts first",
		live:        m3dt,
		users:       []plan.User{claim("workers-c"), m3data, claim("workers-a"), claim("workers-b")},
		wantBlocked: true,
		wantMessage: "it is in use by Metal3Data workers-data-0, 3 Metal3DataClaims (workers-a, ...)",
	}, {
		name:        "CAPM3's finalizer on another kind: its release cannot be predicted there",
		live:        m3mt,
		finalizers:  []string{capm3},
		wantBlocked: true,
		wantMessage: "finalizer " + capm3 + " keeps it for as long as its controller decides",
	}, {
		name:        "CAPM3's finalizer with only a machine template using it: the use blocks, the finalizer is not named",
		live:        m3dt,
		finalizers:  []string{capm3},
		users:       []plan.User{{ID: id(manifest.Metal3MachineTemplateKind, "fleet", "workers"), Own: true}},
		wantBlocked: true,
		wantMessage: "it is in use by Metal3MachineTemplate workers",
	}, {
		name:        "an unknown finalizer blocks, even with no user",
		live:        m3mt,
		finalizers:  []string{other},
		wantBlocked: true,
		wantMessage: "finalizer " + other + " keeps it for as long as its controller decides",
	}, {
		name:        "an unknown finalizer beside CAPM3's on an unused data template: blocked by the unknown one only",
		live:        m3dt,
		finalizers:  []string{capm3, other},
		wantBlocked: true,
		wantMessage: "finalizer " + other + " keeps it for as long as its controller decides",
	}, {
		name:        "users and finalizers together: users first, then each finalizer in order",
		live:        m3mt,
		finalizers:  []string{other, "example.com/second"},
		users:       []plan.User{md},
		wantBlocked: true,
		wantMessage: "it is in use by MachineDeployment md-0; finalizer " + other + " keeps it for as long as its controller decides" +
			"; finalizer example.com/second keeps it for as long as its controller decides",
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			live := fromYAML(t, tc.live)
			live.SetFinalizers(tc.finalizers)
			usersBefore := append([]plan.User(nil), tc.users...)
			msg, blocked := plan.DeleteBlocked(live, tc.users)
			g.Expect(blocked).To(Equal(tc.wantBlocked))
			g.Expect(msg).To(Equal(tc.wantMessage))
			g.Expect(tc.users).To(Equal(usersBefore), "the users are not reordered in place")
			again, _ := plan.DeleteBlocked(live, tc.users)
			g.Expect(again).To(Equal(msg), "the same facts give the same message")
		})
	}
}
