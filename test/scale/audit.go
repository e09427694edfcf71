package scale

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/templatedrift/template-drift-controller/test/harness"
)

// Requests counts one user's completed requests received in a time window.
type Requests struct {
	// Total is every request.
	Total int `json:"total"`
	// ByVerb counts them by verb (get, list, watch, create, patch, ...).
	ByVerb map[string]int `json:"byVerb"`
	// ByResource counts them by "verb resource[/subresource]", with
	// " (dry-run)" for dry-run requests, which tells what a pass does.
	ByResource map[string]int `json:"byResource"`
}

// writeVerbs are the verbs that change the cluster, unless dry-run.
var writeVerbs = []string{"create", "update", "patch", "delete", "deletecollection"}

// dryRunSuffix marks, in ByResource, a request with dryRun=All: the
// server answers it as it would the write, and stores nothing.
const dryRunSuffix = " (dry-run)"

// Writes is the number of requests that may have changed the cluster: a
// write verb, not dry-run.
func (r Requests) Writes() int {
	n := 0
	for what, count := range r.ByResource {
		if isWrite(what) {
			n += count
		}
	}
	return n
}

// DryRuns is the number of dry-run requests.
func (r Requests) DryRuns() int {
	n := 0
	for what, count := range r.ByResource {
		if strings.HasSuffix(what, dryRunSuffix) {
			n += count
		}
	}
	return n
}

// Discovery is the number of discovery requests (/api, /apis, /api/v1
// and /apis/<group>/<version>): requests for no object, which Requests.add
// names by their path.
func (r Requests) Discovery() int {
	n := 0
	for what, count := range r.ByResource {
		if _, path, _ := strings.Cut(what, " "); IsDiscovery(path) {
			n += count
		}
	}
	return n
}

// IsDiscovery reports whether a request path is API discovery.
func IsDiscovery(path string) bool {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch parts[0] {
	case "api":
		return len(parts) <= 2
	case "apis":
		return len(parts) <= 3
	}
	return false
}

// WritesByResource lists the writes by "verb resource", sorted, for a
// failure message.
func (r Requests) WritesByResource() []string {
	var out []string
	for what, n := range r.ByResource {
		if isWrite(what) {
			out = append(out, fmt.Sprintf("%s: %d", what, n))
		}
	}
	slices.Sort(out)
	return out
}

func isWrite(what string) bool {
	verb, _, _ := strings.Cut(what, " ")
	return slices.Contains(writeVerbs, verb) && !strings.HasSuffix(what, dryRunSuffix) && !slices.Contains(accessReviews, what)
}

// accessReviews are how ByResource names the reviews, creates that ask a
// question and store nothing: under the lockdown, the impersonated
// account's rules in a namespace, or whether it may list a kind.
var accessReviews = []string{"create selfsubjectaccessreviews", "create selfsubjectrulesreviews"}

// AccessReviews is the number of reviews, of both sorts.
func (r Requests) AccessReviews() int {
	n := 0
	for _, what := range accessReviews {
		n += r.ByResource[what]
	}
	return n
}

// Window is a time interval, start included and end excluded.
type Window struct{ Start, End time.Time }

func (w Window) contains(t time.Time) bool { return !t.Before(w.Start) && t.Before(w.End) }

// CountRequests reads the audit log at path and counts, for each window,
// the ResponseComplete events of user whose request was received in it.
func CountRequests(path, user string, windows ...Window) ([]Requests, error) {
	out := make([]Requests, len(windows))
	for i := range out {
		out[i] = Requests{ByVerb: map[string]int{}, ByResource: map[string]int{}}
	}
	err := harness.ReadAudit(path, "", func(ev harness.Event) {
		if ev.Stage != "ResponseComplete" || ev.User.Username != user {
			return
		}
		for i, w := range windows {
			if w.contains(ev.RequestReceived) {
				out[i].add(ev)
			}
		}
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (r *Requests) add(ev harness.Event) {
	r.Total++
	r.ByVerb[ev.Verb]++
	// A request for no object (discovery) is named by its path.
	what := ev.Path()
	if ev.ObjectRef.Resource != "" {
		what = ev.ObjectRef.Resource
		if ev.ObjectRef.Subresource != "" {
			what += "/" + ev.ObjectRef.Subresource
		}
	}
	if ev.IsDryRun() {
		what += dryRunSuffix
	}
	r.ByResource[ev.Verb+" "+what]++
}
