package harness

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// MetadataPolicy logs every request at the Metadata level (who, which verb,
// which object; no bodies), once it completes: the RequestReceived stage is
// left out, which halves the log.
const MetadataPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
`

// AuditFlags writes the audit policy (YAML) into dir and returns the
// kube-apiserver flags that log every request it selects to dir/audit.log
// as JSON lines, synchronously (blocking mode), without rotation, and the
// log's path.
func AuditFlags(dir, policy string) (map[string]string, string, error) {
	policyFile := filepath.Join(dir, "audit-policy.yaml")
	if err := os.WriteFile(policyFile, []byte(policy), 0o644); err != nil {
		return nil, "", fmt.Errorf("failed to write the audit policy: %w", err)
	}
	log := filepath.Join(dir, "audit.log")
	return map[string]string{
		"audit-policy-file":   policyFile,
		"audit-log-path":      log,
		"audit-log-format":    "json",
		"audit-log-mode":      "blocking",
		"audit-log-maxsize":   "0",
		"audit-log-maxbackup": "0",
	}, log, nil
}

// ObjectRef is the object an audited request was for; empty for a request
// for no object (discovery, /livez).
type ObjectRef struct {
	Resource    string `json:"resource"`
	Namespace   string `json:"namespace"`
	Name        string `json:"name"`
	APIGroup    string `json:"apiGroup"`
	Subresource string `json:"subresource"`
}

// Call is what a request asked and what it was answered.
type Call struct {
	Verb string `json:"verb"`
	// RequestURI tells a dry-run (dryRun in its query).
	RequestURI string    `json:"requestURI"`
	ObjectRef  ObjectRef `json:"objectRef"`
	// RequestObject is the request's body, logged at the Request level: a
	// JSON patch (an array), a merge patch or an object, or DeleteOptions.
	RequestObject json.RawMessage `json:"requestObject"`
	// ResponseObject is the response's body, logged at the
	// RequestResponse level (an access review's answer).
	ResponseObject json.RawMessage `json:"responseObject"`
	// ResponseStatus.Code tells a refused write (409 on a failed
	// precondition) from one that was stored.
	ResponseStatus struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
}

// IsDryRun reports whether the request carried dryRun.
func (c Call) IsDryRun() bool {
	_, query, _ := strings.Cut(c.RequestURI, "?")
	q, err := url.ParseQuery(query)
	return err == nil && q.Has("dryRun")
}

// Path is the request's path, without its query.
func (c Call) Path() string {
	p, _, _ := strings.Cut(c.RequestURI, "?")
	return p
}

// Event is the part of an audit.k8s.io/v1 Event the harnesses read.
type Event struct {
	Call
	AuditID string `json:"auditID"`
	Stage   string `json:"stage"`
	User    struct {
		Username string `json:"username"`
	} `json:"user"`
	ImpersonatedUser *struct {
		Username string `json:"username"`
	} `json:"impersonatedUser"`
	RequestReceived time.Time `json:"requestReceivedTimestamp"`
}

// ReadAudit parses the audit log at path and calls each for its events, in
// order. When only is not empty, lines that do not contain it are skipped
// before parsing: a search for one path in a large log. A line that does
// not parse is an error that names it.
func ReadAudit(path, only string, each func(Event)) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("failed to open the audit log: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for line := 1; sc.Scan(); line++ {
		if only != "" && !bytes.Contains(sc.Bytes(), []byte(only)) {
			continue
		}
		var ev Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return fmt.Errorf("failed to parse line %d of the audit log: %w", line, err)
		}
		each(ev)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("failed to read the audit log: %w", err)
	}
	return nil
}
