package chaos

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	authorizationv1 "k8s.io/api/authorization/v1"
)

// ownResources are what the controller reads and writes as itself under
// the lockdown, as helm-controller does: HelmReleases and their status,
// events, its Lease, the RBAC questions it asks at start, and the CRDs it
// resolves kinds from.
var ownResources = []string{"helmreleases", "events", "leases", "selfsubjectaccessreviews", "selfsubjectrulesreviews", "customresourcedefinitions"}

// IdentityCounts sorts the controller's requests by the identity they
// used.
type IdentityCounts struct {
	// Own are requests for the controller's own resources (ownResources)
	// and discovery, as itself.
	Own int `json:"own"`
	// Watches are the list and watch requests of the template and consumer
	// kinds as itself, and of the metadata of CustomResourceDefinitions and
	// RBAC objects: the change notifications (controllers/dynamicwatches.go,
	// servedkinds.go, rbacchanges.go), whose objects only map a change to
	// its HelmRelease or drop the reviews' answers; an impersonated pass
	// reads from them only what its account's reviews allowed.
	Watches int `json:"watches"`
	// Impersonated are requests as a tenant's account, and Refused those
	// the API server refused that account (403).
	Impersonated int `json:"impersonated"`
	Refused      int `json:"refused"`
	// Reviews are the reviews made as a tenant's account (its rules in a
	// namespace, or whether it may list a kind, before its pass reads from
	// the informers), and Allowed those the API server answered with a
	// right to list.
	Reviews int `json:"reviews"`
	Allowed int `json:"allowed"`
}

// IdentityResult is CheckIdentity's answer.
type IdentityResult struct {
	Counts     IdentityCounts
	Violations []Violation
}

// CheckIdentity checks the controller's requests under the lockdown: as
// itself only its own resources, discovery, and the list and watch of
// other kinds (never a Secret, never a get or write of a target); as a
// tenant's account (system:serviceaccount:<ns>:<sa>) nothing that the API
// server let through in another namespace or cluster-wide, no access review
// but whether it may list, no review that lets it list outside its
// namespace, and no
// stored write for a release of a hostile namespace.
func CheckIdentity(reqs []Request, hostile map[string]bool) IdentityResult {
	var res IdentityResult
	violate := func(r Request, why string) {
		res.Violations = append(res.Violations, Violation{InvIdentity, fmt.Sprintf("%s (HTTP %d): %s", r.target(), r.ResponseStatus.Code, why)})
	}
	for _, r := range reqs {
		ref := r.ObjectRef
		if r.ImpersonatedUser == "" {
			switch {
			case ref.Resource == "secrets":
				violate(r, "a Secret request as the controller's own identity")
			case ref.Resource == "" || slices.Contains(ownResources, ref.Resource):
				res.Counts.Own++
			case r.Verb == "list" || r.Verb == "watch":
				res.Counts.Watches++
			default:
				violate(r, "a target request as the controller's own identity")
			}
			continue
		}
		res.Counts.Impersonated++
		refused := r.ResponseStatus.Code == http.StatusForbidden
		if refused {
			res.Counts.Refused++
		}
		ns, ok := accountNamespace(r.ImpersonatedUser)
		switch {
		case !ok:
			violate(r, "impersonated "+r.ImpersonatedUser+", not a service account")
		case ref.Resource == "selfsubjectaccessreviews":
			res.Counts.Reviews++
			checkReview(r, ns, &res.Counts, violate)
		case ref.Resource == "selfsubjectrulesreviews":
			res.Counts.Reviews++
			checkRulesReview(r, ns, &res.Counts, violate)
		case ref.Resource == "":
			// Discovery, as the account.
		case ref.Namespace != ns && !refused:
			violate(r, "let through as "+r.ImpersonatedUser+" outside its namespace")
		case hostile[ns] && r.IsWrite() && r.Succeeded() && !r.IsDryRun():
			violate(r, "stored as the hostile tenant "+r.ImpersonatedUser)
		}
	}
	return res
}

// checkReview checks an access review made as the account of namespace
// ns: it asks whether the account may list a kind (the only question a
// pass asks before it reads from the informers), and an allowed answer is
// for ns only: the tenants' Roles grant nothing elsewhere, so an answer
// allowing more would have come from another identity's rights.
func checkReview(r Request, ns string, counts *IdentityCounts, violate func(Request, string)) {
	var req, resp authorizationv1.SelfSubjectAccessReview
	if err := json.Unmarshal(r.RequestObject, &req); err != nil || req.Spec.ResourceAttributes == nil {
		violate(r, "an access review whose question the audit log does not show")
		return
	}
	attrs := req.Spec.ResourceAttributes
	if attrs.Verb != "list" {
		violate(r, fmt.Sprintf("an access review of %q; a pass asks only whether it may list", attrs.Verb))
	}
	if r.ResponseStatus.Code != http.StatusCreated {
		return // unanswered: the pass reads live
	}
	if err := json.Unmarshal(r.ResponseObject, &resp); err != nil {
		violate(r, "an access review whose answer the audit log does not show")
		return
	}
	if !resp.Status.Allowed {
		return
	}
	counts.Allowed++
	if attrs.Namespace != ns {
		violate(r, fmt.Sprintf("an access review allowed %s to list %s in %q", r.ImpersonatedUser, attrs.Resource, attrs.Namespace))
	}
}

// checkRulesReview checks a rules review made as the account of namespace
// ns: the rules it answers with are the account's there, and one that
// lets it list anything is for ns only, as checkReview's.
func checkRulesReview(r Request, ns string, counts *IdentityCounts, violate func(Request, string)) {
	var req, resp authorizationv1.SelfSubjectRulesReview
	if err := json.Unmarshal(r.RequestObject, &req); err != nil {
		violate(r, "a rules review whose question the audit log does not show")
		return
	}
	if r.ResponseStatus.Code != http.StatusCreated {
		return // unanswered: the pass asks access reviews, or reads live
	}
	if err := json.Unmarshal(r.ResponseObject, &resp); err != nil {
		violate(r, "a rules review whose answer the audit log does not show")
		return
	}
	lists := slices.ContainsFunc(resp.Status.ResourceRules, func(rule authorizationv1.ResourceRule) bool {
		return slices.Contains(rule.Verbs, "list") || slices.Contains(rule.Verbs, "*")
	})
	if !lists {
		return
	}
	counts.Allowed++
	if req.Spec.Namespace != ns {
		violate(r, fmt.Sprintf("a rules review let %s list in %q", r.ImpersonatedUser, req.Spec.Namespace))
	}
}

// accountNamespace returns the namespace of a service account's user name.
func accountNamespace(user string) (string, bool) {
	rest, ok := strings.CutPrefix(user, "system:serviceaccount:")
	if !ok {
		return "", false
	}
	ns, _, ok := strings.Cut(rest, ":")
	return ns, ok
}
