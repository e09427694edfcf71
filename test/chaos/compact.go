package chaos

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/test/harness"
)

// compactInterval is kube-apiserver's --etcd-compaction-interval in the
// compact scenario: etcd keeps about one interval of history.
const compactInterval = 2 * time.Second

// InvRelisted is the compact scenario's own invariant: the controller's
// informers relisted after the watches expired. Without a relist the
// scenario tested nothing.
const InvRelisted = "relisted"

// compactFlags are the compact scenario's kube-apiserver flags. Without
// the watch cache, a watch resumed at a resourceVersion that etcd has
// compacted is answered "too old resource version" (410 Gone), and the
// informer must list again; with the cache, the API server would answer
// from its own window. etcd is compacted every compactInterval.
func compactFlags() map[string]string {
	return map[string]string{"watch-cache": "false", "etcd-compaction-interval": compactInterval.String()}
}

// compact lets the controller's watches expire during convergence,
// cfg.Restarts times, 1-5 s apart: it drifts objects afresh (driftAfresh),
// waits until etcd has compacted past those writes, restarts the API
// server, so that every watch is resumed at a compacted resourceVersion
// and every informer relists, and drifts objects afresh again while they
// do. The drifts are checked like kill's: healed (convergence waits for
// them: a cache that missed one reports the release in sync), and each
// corrected once per drift (no loop, no lost update).
func (r *run) compact(ctx context.Context) error {
	r.res.Fault = fmt.Sprintf("%d kube-apiserver restarts, 1s-5s apart, on etcd compacted every %s without a watch cache; %d objects drifted afresh before each and %d just after",
		r.cfg.Restarts, compactInterval, killDrifts(r.cfg.N), killDrifts(r.cfg.N))
	r.raced = map[string]int{}
	r.faultsFrom = time.Now()
	for i := range r.cfg.Restarts {
		if err := harness.Sleep(ctx, r.between(time.Second, 5*time.Second)); err != nil {
			return err
		}
		if err := r.driftAfresh(ctx, 2*i); err != nil {
			return err
		}
		// Two intervals: the compaction after the drift's writes has run.
		if err := harness.Sleep(ctx, 2*compactInterval+time.Second); err != nil {
			return err
		}
		start := time.Now()
		if err := r.env.RestartAPIServer(); err != nil {
			return err
		}
		r.logf("%s: restarted kube-apiserver (%d of %d) in %s", r.scenario, i+1, r.cfg.Restarts, time.Since(start).Round(time.Millisecond))
		if err := r.driftAfresh(ctx, 2*i+1); err != nil {
			return err
		}
	}
	return nil
}

// unhealedReason counts, among the releases not converged, the drifts of
// the compact scenario not healed yet.
const unhealedReason = "drift not healed"

// unhealed counts the objects drifted afresh that still carry the drift.
func (r *run) unhealed(ctx context.Context) (int, error) {
	n := 0
	for _, t := range r.raceTargets {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(t.gvk)
		if err := r.env.Client.Get(ctx, client.ObjectKey{Namespace: t.key.Namespace, Name: t.key.Name}, u); err != nil {
			return 0, fmt.Errorf("failed to read %s: %w", t.key, err)
		}
		if stillSetBack(u) {
			n++
		}
	}
	return n, nil
}

// checkRelisted counts the controller's lists made after the faults began
// (a reflector's relist: a list, or a watch that asks for the initial
// events) and fails InvRelisted when there is none.
func (r *run) checkRelisted() error {
	r.res.Checked = append(r.res.Checked, InvRelisted)
	reqs, err := readTimedRequests(r.auditLog, ControllerUser)
	if err != nil {
		return err
	}
	r.res.Relists = Relists(reqs, r.faultsFrom)
	if r.res.Relists == 0 {
		r.res.violate(InvRelisted, "the controller made no list after the watches expired: the scenario tested nothing")
	}
	return nil
}

// timedRequest is an audited request of the controller and when the API
// server received it.
type timedRequest struct {
	harness.Call
	At time.Time
}

// readTimedRequests reads the answered requests of user from the audit
// log at path, once each: a watch still open is known by its
// ResponseStarted stage alone.
func readTimedRequests(path, user string) ([]timedRequest, error) {
	var out []timedRequest
	seen := map[string]bool{}
	err := harness.ReadAudit(path, "", func(ev harness.Event) {
		if (ev.Stage != "ResponseComplete" && ev.Stage != "ResponseStarted") || ev.User.Username != user {
			return
		}
		if ev.AuditID != "" && seen[ev.AuditID] {
			return
		}
		seen[ev.AuditID] = true
		out = append(out, timedRequest{Call: ev.Call, At: ev.RequestReceived})
	})
	return out, err
}

// Relists counts the informers' collection reads among reqs received from
// since on: a paged list (a reflector lists with a limit; a pass's own
// lists, Helm's storage among them, have none), or a watch with
// sendInitialEvents (client-go's streaming list). A watch resumed at a
// resourceVersion is no relist.
func Relists(reqs []timedRequest, since time.Time) int {
	n := 0
	for _, r := range reqs {
		if r.At.Before(since) || r.ObjectRef.Name != "" {
			continue
		}
		_, query, _ := strings.Cut(r.RequestURI, "?")
		q, err := url.ParseQuery(query)
		if err != nil {
			continue
		}
		if (r.Verb == "list" && q.Has("limit")) || (r.Verb == "watch" && q.Get("sendInitialEvents") == "true") {
			n++
		}
	}
	return n
}
