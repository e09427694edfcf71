package scale

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// auditPolicy logs every request at the Metadata level (who, which verb,
// which object; no bodies), once it completes: the RequestReceived stage is
// left out, which halves the log.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
`

// AuditFlags writes the audit policy into dir and returns the
// kube-apiserver flags that log every request to dir/audit.log as JSON
// lines, synchronously (blocking mode), without rotation, and the log's
// path.
func AuditFlags(dir string) (map[string]string, string, error) {
	return AuditFlagsWithPolicy(dir, auditPolicy)
}

// AuditFlagsWithPolicy is AuditFlags with an audit policy of the caller's
// (YAML): the chaos harness logs the request bodies of the controller's
// writes, to check their preconditions.
func AuditFlagsWithPolicy(dir, auditPolicy string) (map[string]string, string, error) {
	policy := filepath.Join(dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o644); err != nil {
		return nil, "", fmt.Errorf("failed to write the audit policy: %w", err)
	}
	log := filepath.Join(dir, "audit.log")
	return map[string]string{
		"audit-policy-file":   policy,
		"audit-log-path":      log,
		"audit-log-format":    "json",
		"audit-log-mode":      "blocking",
		"audit-log-maxsize":   "0",
		"audit-log-maxbackup": "0",
	}, log, nil
}

// auditEvent is the part of an audit.k8s.io/v1 Event the benchmark reads.
type auditEvent struct {
	Stage      string `json:"stage"`
	Verb       string `json:"verb"`
	RequestURI string `json:"requestURI"`
	User       struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	RequestReceived time.Time `json:"requestReceivedTimestamp"`
}

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
	return slices.Contains(writeVerbs, verb) && !strings.HasSuffix(what, dryRunSuffix)
}

// Window is a time interval, start included and end excluded.
type Window struct{ Start, End time.Time }

func (w Window) contains(t time.Time) bool { return !t.Before(w.Start) && t.Before(w.End) }

// CountRequests reads the audit log at path and counts, for each window,
// the ResponseComplete events of user whose request was received in it.
func CountRequests(path, user string, windows ...Window) ([]Requests, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("failed to open the audit log: %w", err)
	}
	defer f.Close()
	out := make([]Requests, len(windows))
	for i := range out {
		out[i] = Requests{ByVerb: map[string]int{}, ByResource: map[string]int{}}
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for line := 1; sc.Scan(); line++ {
		var ev auditEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return nil, fmt.Errorf("failed to parse line %d of the audit log: %w", line, err)
		}
		if ev.Stage != "ResponseComplete" || ev.User.Username != user {
			continue
		}
		for i, w := range windows {
			if w.contains(ev.RequestReceived) {
				out[i].add(ev)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("failed to read the audit log: %w", err)
	}
	return out, nil
}

func (r *Requests) add(ev auditEvent) {
	r.Total++
	r.ByVerb[ev.Verb]++
	// A request for no object (discovery) is named by its path.
	path, query, _ := strings.Cut(ev.RequestURI, "?")
	what := path
	if ev.ObjectRef != nil {
		what = ev.ObjectRef.Resource
		if ev.ObjectRef.Subresource != "" {
			what += "/" + ev.ObjectRef.Subresource
		}
	}
	if q, err := url.ParseQuery(query); err == nil && q.Has("dryRun") {
		what += dryRunSuffix
	}
	r.ByResource[ev.Verb+" "+what]++
}
