package chaos

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/test/harness"
)

// ControllerUser is the user the controller runs as in the chaos harness.
const ControllerUser = "template-drift-controller-chaos"

// auditPolicy logs the controller user's access and rules reviews with their answers
// (the identity invariant checks them), its writes at the Request level
// (the body is the evidence of each precondition) and every other request
// at the Metadata level, as the scale benchmark does.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: RequestResponse
  users: ["` + ControllerUser + `"]
  resources: [{group: "authorization.k8s.io", resources: ["selfsubjectaccessreviews", "selfsubjectrulesreviews"]}]
- level: Request
  users: ["` + ControllerUser + `"]
  verbs: ["create", "update", "patch", "delete", "deletecollection"]
- level: Metadata
`

// Write is one completed write request of the controller in the audit log,
// dry-runs left out.
type Write struct{ harness.Call }

// Succeeded reports whether the server stored the write.
func (w Write) Succeeded() bool { return w.ResponseStatus.Code >= 200 && w.ResponseStatus.Code < 300 }

func (w Write) String() string { return fmt.Sprintf("%s (HTTP %d)", w.target(), w.ResponseStatus.Code) }

// target is the write's verb and object: "patch metal3machinetemplates ns/name".
func (w Write) target() string {
	r := w.ObjectRef
	what := r.Resource
	if r.Subresource != "" {
		what += "/" + r.Subresource
	}
	return fmt.Sprintf("%s %s %s/%s", w.Verb, what, r.Namespace, r.Name)
}

// Request is one completed request of the controller in the audit log:
// its verb, object and answer, and the account it impersonated ("" when
// it used its own identity).
type Request struct {
	Write
	ImpersonatedUser string
}

var writeVerbs = []string{"create", "update", "patch", "delete", "deletecollection"}

// IsWrite reports whether the request is a write, dry-run or not.
func (w Write) IsWrite() bool { return slices.Contains(writeVerbs, w.Verb) }

// ReadWrites reads the audit log at path and returns the completed,
// non-dry-run writes of user, impersonating or not, in order. Access
// reviews, creates that store nothing, are not writes.
func ReadWrites(path, user string) ([]Write, error) {
	reqs, err := ReadRequests(path, user)
	if err != nil {
		return nil, err
	}
	var out []Write
	for _, r := range reqs {
		if r.IsWrite() && !r.IsDryRun() && !slices.Contains(reviews, r.ObjectRef.Resource) {
			out = append(out, r.Write)
		}
	}
	return out, nil
}

// ReadRequests reads the audit log at path and returns every request of
// user (the authenticated user: impersonated requests too) that was
// answered, watches still open included, once each, in order.
func ReadRequests(path, user string) ([]Request, error) {
	var out []Request
	started := map[string]int{}
	err := harness.ReadAudit(path, "", func(ev harness.Event) {
		// A watch logs ResponseStarted when it starts and ResponseComplete
		// only when it ends: one still open is known by the first.
		if (ev.Stage != "ResponseComplete" && ev.Stage != "ResponseStarted") || ev.User.Username != user {
			return
		}
		r := Request{Write: Write{ev.Call}}
		if ev.ImpersonatedUser != nil {
			r.ImpersonatedUser = ev.ImpersonatedUser.Username
		}
		if i, ok := started[ev.AuditID]; ok && ev.AuditID != "" {
			out[i] = r
			return
		}
		if ev.Stage == "ResponseStarted" {
			started[ev.AuditID] = len(out)
		}
		out = append(out, r)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// reviews are the resources a create of which asks a question and stores
// nothing (the manager's RBAC checks).
var reviews = []string{"selfsubjectaccessreviews", "selfsubjectrulesreviews", "subjectaccessreviews", "tokenreviews"}

// exempt are the writes no precondition and no scope is asked of: events,
// which the event recorder creates and patches (a count) on its own, and
// reviews, which store nothing.
func exempt(w Write) bool {
	return w.ObjectRef.Resource == "events" || slices.Contains(reviews, w.ObjectRef.Resource)
}

// Precondition returns what is missing from w's precondition, or "" when it
// has one: a create needs none (it fails if the name is taken); an update
// carries metadata.resourceVersion; a patch a JSON patch operation that
// tests or sets /metadata/resourceVersion (the add-on's internal/diff sets
// it with `replace`: the server then refuses the patch with 409 Conflict
// when the object moved on, as for a merge patch with an optimistic lock),
// or metadata.resourceVersion in its body; a
// delete DeleteOptions with preconditions.uid and
// preconditions.resourceVersion. A write the server did not carry out and
// whose body the audit log does not have cannot be judged and stored
// nothing: a request cut off when the controller was killed (500, "client
// disconnected") before its body was read.
func Precondition(w Write) string {
	if exempt(w) || unread(w) {
		return ""
	}
	switch w.Verb {
	case "create":
		return ""
	case "update":
		if bodyResourceVersion(w.RequestObject) == "" {
			return "an update without metadata.resourceVersion"
		}
	case "patch":
		if !guardsResourceVersion(w.RequestObject) && bodyResourceVersion(w.RequestObject) == "" {
			return "a patch that neither tests nor sets /metadata/resourceVersion"
		}
	case "delete":
		var opts struct {
			Preconditions struct {
				UID             string `json:"uid"`
				ResourceVersion string `json:"resourceVersion"`
			} `json:"preconditions"`
		}
		_ = json.Unmarshal(w.RequestObject, &opts)
		if opts.Preconditions.UID == "" || opts.Preconditions.ResourceVersion == "" {
			return "a delete without preconditions uid and resourceVersion"
		}
	default:
		return "a " + w.Verb + ", which no precondition can guard"
	}
	return ""
}

// unread reports whether w failed with no body in the audit log: the
// server never read the request, so it wrote nothing.
func unread(w Write) bool {
	stored := w.ResponseStatus.Code >= 200 && w.ResponseStatus.Code < 300
	return !stored && len(w.RequestObject) == 0
}

func bodyResourceVersion(body json.RawMessage) string {
	var o struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	_ = json.Unmarshal(body, &o)
	return o.Metadata.ResourceVersion
}

// guardsResourceVersion reports whether a JSON patch tests or sets
// /metadata/resourceVersion to a value.
func guardsResourceVersion(body json.RawMessage) bool {
	var ops []struct {
		Op    string `json:"op"`
		Path  string `json:"path"`
		Value any    `json:"value"`
	}
	if json.Unmarshal(body, &ops) != nil {
		return false
	}
	for _, op := range ops {
		guards := op.Op == "test" || op.Op == "replace" || op.Op == "add"
		if s, ok := op.Value.(string); ok && guards && op.Path == "/metadata/resourceVersion" && s != "" {
			return true
		}
	}
	return false
}

// onlyBlockMove reports whether a JSON patch touches nothing but the
// block-move annotation (and the resourceVersion it is guarded with): the
// one write the add-on makes to a Cluster.
func onlyBlockMove(body json.RawMessage) bool {
	var ops []struct {
		Op    string `json:"op"`
		Path  string `json:"path"`
		Value any    `json:"value"`
	}
	if json.Unmarshal(body, &ops) != nil || len(ops) == 0 {
		return false
	}
	key := "/metadata/annotations/" + strings.ReplaceAll(api.BlockMoveAnnotation, "/", "~1")
	for _, op := range ops {
		switch op.Path {
		case "/metadata/resourceVersion", key:
		case "/metadata/annotations":
			m, ok := op.Value.(map[string]any)
			if _, marks := m[api.BlockMoveAnnotation]; op.Op != "add" || !ok || len(m) != 1 || !marks {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// Scope is what the controller may write: the templates and consumers of
// the opted-in releases (by namespace, lower-cased plural resource and
// name), their replacements, the HelmReleases' status, clusterctl's
// block-move annotation on the Clusters of the fleet's namespaces, and with
// leader election its Lease.
type Scope struct {
	objects  map[string]bool
	releases map[string]bool
	// release is the fleet's HelmReleases' name.
	release string
	// lease is the controller's leader-election Lease, "namespace/name",
	// when it runs with leader election.
	lease string
}

// WithLease returns s with the controller's leader-election Lease in it.
func (s Scope) WithLease(namespace, name string) Scope {
	s.lease = namespace + "/" + name
	return s
}

// WithStatusOf returns s with the status of the HelmReleases named
// "namespace/name" in it (the HelmReleases a scenario adds to the fleet,
// whose objects are not the controller's to write).
func (s Scope) WithStatusOf(releases ...string) Scope {
	for _, r := range releases {
		s.releases[r] = true
	}
	return s
}

// NewScope builds the scope of the fleet's objects and of the HelmReleases
// named release in the fleet's namespaces.
func NewScope(objs []ObjectKey, release string) Scope {
	s := Scope{objects: map[string]bool{}, releases: map[string]bool{}, release: release}
	for _, o := range objs {
		s.objects[scopeKey(o.Namespace, resourceOf(o.Kind), o.Name)] = true
		s.releases[o.Namespace+"/"+release] = true
	}
	return s
}

// resourceOf is the fixture kinds' resource: lower case, plural in -s.
func resourceOf(kind string) string { return strings.ToLower(kind) + "s" }

func scopeKey(ns, resource, name string) string { return ns + "/" + resource + "/" + name }

// replacementName is a rotated replacement's name: the original's and ten
// hex digits (internal/plan/naming.go).
var replacementName = regexp.MustCompile(`^(.+)-[0-9a-f]{10}$`)

// OutOfScope returns why w is out of s, or "".
func (s Scope) OutOfScope(w Write) string {
	r := w.ObjectRef
	switch {
	case exempt(w):
		return ""
	case r.Resource == "helmreleases":
		if r.Subresource == "status" && s.releases[r.Namespace+"/"+r.Name] {
			return ""
		}
		return "a write to a HelmRelease other than its status, or of a release not in the fleet"
	case r.Resource == "leases" && r.Subresource == "" && s.lease != "" && r.Namespace+"/"+r.Name == s.lease:
		return ""
	case r.Subresource != "":
		return "a write to subresource " + r.Subresource
	case r.Resource == "clusters":
		if w.Verb == "patch" && s.releases[r.Namespace+"/"+s.release] && onlyBlockMove(w.RequestObject) {
			return ""
		}
		return "a write to a Cluster other than a patch of clusterctl's block-move annotation in the fleet"
	case s.objects[scopeKey(r.Namespace, r.Resource, r.Name)]:
		return ""
	}
	m := replacementName.FindStringSubmatch(r.Name)
	if m == nil || !s.objects[scopeKey(r.Namespace, r.Resource, m[1])] {
		return "not a template or consumer of an opted-in release, nor a replacement of one"
	}
	if w.Verb == "create" {
		var o struct {
			Metadata struct {
				Annotations map[string]string `json:"annotations"`
			} `json:"metadata"`
		}
		_ = json.Unmarshal(w.RequestObject, &o)
		if o.Metadata.Annotations[api.ReplacesAnnotation] != m[1] {
			return "a create under a replacement's name without " + api.ReplacesAnnotation + ": " + m[1]
		}
	}
	return ""
}

// CheckWrites checks every write against the preconditions and scope
// invariants.
func CheckWrites(writes []Write, s Scope) []Violation {
	var out []Violation
	for _, w := range writes {
		if why := Precondition(w); why != "" {
			out = append(out, Violation{InvPreconditions, w.String() + ": " + why})
		}
		if why := s.OutOfScope(w); why != "" {
			out = append(out, Violation{InvScope, w.String() + ": " + why})
		}
	}
	return out
}

// StoredWritesTo counts the writes that were stored (not refused) to the
// objects keys names, as scopeKey does, by key.
func StoredWritesTo(writes []Write, keys map[string]bool) map[string]int {
	out := map[string]int{}
	for _, w := range writes {
		k := scopeKey(w.ObjectRef.Namespace, w.ObjectRef.Resource, w.ObjectRef.Name)
		if w.Succeeded() && w.ObjectRef.Subresource == "" && keys[k] {
			out[k]++
		}
	}
	return out
}
