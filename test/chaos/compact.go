package chaos

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

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

// CompactSpec lets the controller's watches expire during convergence,
// in.Restarts times, 1-5 s apart: it drifts objects afresh, waits until
// etcd has compacted past those writes, restarts the API server, so that
// every watch is resumed at a compacted resourceVersion and every informer
// relists, and drifts objects afresh again while they do. The drifts are
// checked like kill's: healed (convergence waits for them: a cache that
// missed one reports the release in sync), and each corrected once per
// drift (no loop, no lost update); and the informers must have relisted.
func CompactSpec(ctx context.Context, in RestartInput) (res Result, err error) {
	d := newDrifts()
	var w *world
	w = newWorld(in.Input, ScenarioCompact, worldOptions{apiServerFlags: compactFlags(),
		unhealed: func(ctx context.Context) (int, error) { return d.unhealed(ctx, w) }})
	defer func() { w.stop(err) }()
	if err := w.setUp(ctx, nil); err != nil {
		return w.res, err
	}
	w.res.Fault = fmt.Sprintf("%d kube-apiserver restarts, 1s-5s apart, on etcd compacted every %s without a watch cache; %d objects drifted afresh before each and %d just after",
		in.Restarts, compactInterval, killDrifts(in.N), killDrifts(in.N))
	from := time.Now()
	if err := w.step("inject the fault", func() error { return compact(ctx, w, d, in.Restarts) }); err != nil {
		return w.res, err
	}
	w.faultsStopped(ctx)
	return w.conclude(ctx, checks{}, func(writes []Write) error {
		if err := checkRelisted(w, d, from); err != nil {
			return err
		}
		return d.check(ctx, w, writes)
	})
}

// compact drifts, waits for the compaction and restarts the API server,
// then drifts again, restarts times.
func compact(ctx context.Context, w *world, d *drifts, restarts int) error {
	for i := range restarts {
		if err := harness.Sleep(ctx, w.between(time.Second, 5*time.Second)); err != nil {
			return err
		}
		if err := d.driftAfresh(ctx, w, 2*i); err != nil {
			return err
		}
		// Two intervals: the compaction after the drift's writes has run.
		if err := harness.Sleep(ctx, 2*compactInterval+time.Second); err != nil {
			return err
		}
		if err := w.restartAPIServer(i+1, restarts); err != nil {
			return err
		}
		if err := d.driftAfresh(ctx, w, 2*i+1); err != nil {
			return err
		}
	}
	return nil
}

// checkRelisted counts the controller's lists made after the faults began
// (a reflector's relist: a list, or a watch that asks for the initial
// events) and fails InvRelisted when there is none.
func checkRelisted(w *world, d *drifts, from time.Time) error {
	w.res.Checked = append(w.res.Checked, InvRelisted)
	reqs, err := readTimedRequests(w.auditLog, ControllerUser)
	if err != nil {
		return err
	}
	d.fig.Relists = Relists(reqs, from)
	if d.fig.Relists == 0 {
		w.res.violate(InvRelisted, "the controller made no list after the watches expired: the scenario tested nothing")
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
