package chaos

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
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
	// kinds as itself, and of the metadata of CustomResourceDefinitions:
	// the change notifications (controllers/dynamicwatches.go, servedkinds.go),
	// whose objects only map a change to its HelmRelease; no impersonated
	// pass reads them.
	Watches int `json:"watches"`
	// Impersonated are requests as a tenant's account, and Refused those
	// the API server refused that account (403).
	Impersonated int `json:"impersonated"`
	Refused      int `json:"refused"`
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
// server let through in another namespace or cluster-wide, and no stored
// write for a release of a hostile namespace.
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

// accountNamespace returns the namespace of a service account's user name.
func accountNamespace(user string) (string, bool) {
	rest, ok := strings.CutPrefix(user, "system:serviceaccount:")
	if !ok {
		return "", false
	}
	ns, _, ok := strings.Cut(rest, ":")
	return ns, ok
}
