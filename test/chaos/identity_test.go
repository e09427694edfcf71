package chaos

import (
	"strconv"
	"testing"

	. "github.com/onsi/gomega"
)

func TestCheckIdentity(t *testing.T) {
	req := func(verb, resource, ns, name string, code int, as string) Request {
		r := Request{ImpersonatedUser: as}
		r.Verb, r.ObjectRef.Resource, r.ObjectRef.Namespace, r.ObjectRef.Name, r.ResponseStatus.Code = verb, resource, ns, name, code
		r.RequestURI = "/apis/x/" + resource
		return r
	}
	review := func(verb, ns string, code int, allowed bool, as string) Request {
		r := req("create", "selfsubjectaccessreviews", "", "", code, as)
		r.RequestObject = []byte(`{"spec":{"resourceAttributes":{"namespace":"` + ns + `","verb":"` + verb + `","group":"cluster.x-k8s.io","resource":"machinedeployments"}}}`)
		if code == 201 {
			r.ResponseObject = []byte(`{"status":{"allowed":` + strconv.FormatBool(allowed) + `}}`)
		}
		return r
	}
	rules := func(ns string, code int, verbs string, as string) Request {
		r := req("create", "selfsubjectrulesreviews", "", "", code, as)
		r.RequestObject = []byte(`{"spec":{"namespace":"` + ns + `"}}`)
		if code == 201 {
			r.ResponseObject = []byte(`{"status":{"resourceRules":[{"verbs":` + verbs + `,"apiGroups":["*"],"resources":["*"]}]}}`)
		}
		return r
	}
	const tenantA, tenantH = "system:serviceaccount:fleet-a:tenant", "system:serviceaccount:hostile:tenant"
	hostile := map[string]bool{"hostile": true}
	cases := []struct {
		name string
		reqs []Request
		// want are the counts; violations how many breaches.
		want       IdentityCounts
		violations int
	}{{
		name: "its own resources and discovery as itself, the watches, the tenants' work as the tenants",
		reqs: []Request{req("patch", "helmreleases", "fleet-a", "cluster", 200, ""), req("create", "events", "fleet-a", "", 201, ""),
			req("get", "", "", "", 200, ""), req("watch", "metal3machinetemplates", "", "", 200, ""), req("list", "kubeadmcontrolplanes", "", "", 200, ""),
			req("get", "secrets", "fleet-a", "sh.helm.release.v1.cluster.v1", 200, tenantA), req("patch", "metal3machinetemplates", "fleet-a", "md", 200, tenantA)},
		want: IdentityCounts{Own: 3, Watches: 2, Impersonated: 2},
	}, {
		name:       "a Secret read as itself",
		reqs:       []Request{req("get", "secrets", "fleet-a", "kubeconfig", 200, "")},
		violations: 1,
	}, {
		name:       "a Secret list as itself, even one refused",
		reqs:       []Request{req("list", "secrets", "", "", 403, "")},
		violations: 1,
	}, {
		name:       "a target get or write as itself",
		reqs:       []Request{req("get", "metal3machinetemplates", "fleet-a", "md", 200, ""), req("patch", "kubeadmcontrolplanes", "fleet-a", "cp", 200, "")},
		violations: 2,
	}, {
		name:       "a tenant refused in another namespace is its own rights at work",
		reqs:       []Request{req("get", "metal3machinetemplates", "fleet-b", "md", 403, tenantA)},
		want:       IdentityCounts{Impersonated: 1, Refused: 1},
		violations: 0,
	}, {
		name:       "a tenant let through in another namespace",
		reqs:       []Request{req("get", "metal3machinetemplates", "fleet-b", "md", 200, tenantA)},
		want:       IdentityCounts{Impersonated: 1},
		violations: 1,
	}, {
		name: "a hostile tenant's stored write, but not its dry-run",
		reqs: []Request{req("patch", "metal3machinetemplates", "hostile", "md", 200, tenantH), func() Request {
			r := req("patch", "metal3machinetemplates", "hostile", "md", 200, tenantH)
			r.RequestURI += "?dryRun=All"
			return r
		}()},
		want:       IdentityCounts{Impersonated: 2},
		violations: 1,
	}, {
		name: "access reviews as a tenant: allowed in its namespace, denied or unanswered elsewhere",
		reqs: []Request{review("list", "fleet-a", 201, true, tenantA), review("list", "fleet-b", 201, false, tenantA),
			review("list", "fleet-b", 500, false, tenantA)},
		want: IdentityCounts{Impersonated: 3, Reviews: 3, Allowed: 1},
	}, {
		name:       "an access review that allowed a tenant another namespace",
		reqs:       []Request{review("list", "fleet-b", 201, true, tenantA)},
		want:       IdentityCounts{Impersonated: 1, Reviews: 1, Allowed: 1},
		violations: 1,
	}, {
		name:       "an access review of a write, or without its question or answer",
		reqs:       []Request{review("patch", "fleet-a", 201, false, tenantA), func() Request { r := review("list", "fleet-a", 201, true, tenantA); r.RequestObject = nil; return r }(), func() Request { r := review("list", "fleet-a", 201, true, tenantA); r.ResponseObject = nil; return r }()},
		want:       IdentityCounts{Impersonated: 3, Reviews: 3},
		violations: 3,
	}, {
		name: "rules reviews as a tenant: a right to list in its namespace, none elsewhere, or unanswered",
		reqs: []Request{rules("fleet-a", 201, `["get","list"]`, tenantA), rules("fleet-b", 201, `["get"]`, tenantA),
			rules("fleet-b", 500, "", tenantA)},
		want: IdentityCounts{Impersonated: 3, Reviews: 3, Allowed: 1},
	}, {
		name:       "a rules review that lets a tenant list in another namespace",
		reqs:       []Request{rules("fleet-b", 201, `["*"]`, tenantA)},
		want:       IdentityCounts{Impersonated: 1, Reviews: 1, Allowed: 1},
		violations: 1,
	}, {
		name:       "a rules review without its question or answer",
		reqs:       []Request{func() Request { r := rules("fleet-a", 201, `["list"]`, tenantA); r.RequestObject = nil; return r }(), func() Request { r := rules("fleet-a", 201, `["list"]`, tenantA); r.ResponseObject = nil; return r }()},
		want:       IdentityCounts{Impersonated: 2, Reviews: 2},
		violations: 2,
	}, {
		name:       "impersonating a user that is no service account",
		reqs:       []Request{req("get", "metal3machinetemplates", "fleet-a", "md", 200, "admin")},
		want:       IdentityCounts{Impersonated: 1},
		violations: 1,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			got := CheckIdentity(tc.reqs, hostile)
			g.Expect(got.Violations).To(HaveLen(tc.violations), "%v", got.Violations)
			if tc.violations == 0 || tc.want != (IdentityCounts{}) {
				g.Expect(got.Counts).To(Equal(tc.want))
			}
		})
	}
}
