package scale

import (
	"context"
	"fmt"
	"strings"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/test/harness"
)

// Poll intervals: while the fleet converges its HelmReleases are listed
// from the harness's informer every millisecond per release, within a
// floor and a ceiling; the one template and HelmRelease of a reaction are
// read every 10 ms.
const (
	convergePollPerRelease = time.Millisecond
	convergePollFloor      = 250 * time.Millisecond
	convergePollCeiling    = time.Second
	reactionPoll           = 10 * time.Millisecond
	// progressEvery is how often a slow convergence is logged.
	progressEvery = 15 * time.Second
	// reactionTimeout bounds the wait for one drift to be corrected.
	reactionTimeout = 2 * time.Minute
	// auditFlush is how long a request received before the window's end
	// is given to complete and reach the audit log.
	auditFlush = 2 * time.Second
)

// pendingFunc counts the HelmReleases of list that have not converged,
// by reason: notInSync for the add-on, notReconciled for helm-controller.
type pendingFunc func(list []helmv2.HelmRelease) map[string]int

// converge waits until no HelmRelease is pending, and returns the window
// from the controller's start to then, and the controller's CPU time by
// then.
func converge(ctx context.Context, s *session, hrs *hrWatch, p *processes, pending pendingFunc) (Window, time.Duration, error) {
	var left map[string]int
	logged := time.Now()
	every := min(max(time.Duration(s.run.N)*convergePollPerRelease, convergePollFloor), convergePollCeiling)
	err := wait.PollUntilContextTimeout(ctx, every, convergeTimeout, true, func(ctx context.Context) (bool, error) {
		if err := p.exited(); err != nil {
			return false, err
		}
		list, err := hrs.list(ctx)
		if err != nil {
			return false, err
		}
		left = pending(list)
		if time.Since(logged) > progressEvery {
			s.logf("%s after start, not in sync yet by reason: %v", time.Since(p.started).Round(time.Second), left)
			logged = time.Now()
		}
		return len(left) == 0, nil
	})
	if err != nil {
		return Window{}, 0, fmt.Errorf("%w; HelmReleases not converged, by reason: %v", err, left)
	}
	convergence := Window{Start: p.started, End: time.Now()}
	cpu, err := p.cpu()
	return convergence, cpu, err
}

// notInSync counts the HelmReleases whose TemplatesInSync condition is not
// True, by reason ("none" for no condition yet).
func notInSync(list []helmv2.HelmRelease) map[string]int {
	out := map[string]int{}
	for _, hr := range list {
		c := apimeta.FindStatusCondition(hr.Status.Conditions, api.TemplatesInSyncCondition)
		switch {
		case c == nil:
			out["none"]++
		case c.Status != metav1.ConditionTrue:
			out[c.Reason]++
		}
	}
	return out
}

// releaseActionInFlight is how the Reconciling condition's message of
// helm-controller v1.6.4 starts while a release action (install, upgrade,
// test, rollback, ...) runs; every other pass also sets Reconciling, with
// "Fulfilling prerequisites", which at large fleets on a short interval
// is always true of a few of them.
const releaseActionInFlight = "Running '"

// notReconciled counts the HelmReleases helm-controller has not reconciled
// to Ready=True at their generation yet, by reason: "generation" when it
// has not observed the current spec, "release action" while a Helm action
// runs, else Ready's reason ("none" for no Ready condition).
func notReconciled(list []helmv2.HelmRelease) map[string]int {
	out := map[string]int{}
	for _, hr := range list {
		ready := apimeta.FindStatusCondition(hr.Status.Conditions, "Ready")
		reconciling := apimeta.FindStatusCondition(hr.Status.Conditions, "Reconciling")
		switch {
		case hr.Status.ObservedGeneration != hr.Generation:
			out["generation"]++
		case reconciling != nil && strings.HasPrefix(reconciling.Message, releaseActionInFlight):
			out["release action"]++
		case ready == nil:
			out["none"]++
		case ready.Status != metav1.ConditionTrue || ready.ObservedGeneration != hr.Generation:
			out[ready.Reason]++
		}
	}
	return out
}

// upgraded lists the HelmReleases whose latest release is no longer the
// one the fleet stored (version 1): helm-controller upgraded them.
func upgraded(list []helmv2.HelmRelease) []string {
	var out []string
	for _, hr := range list {
		if cur := hr.Status.History.Latest(); cur == nil || cur.Version != 1 {
			out = append(out, hr.Namespace+"/"+hr.Name)
		}
	}
	return out
}

// checkNotUpgraded checks that helm-controller found every release up to
// date: had it upgraded one, it would be measuring Helm upgrades, not
// drift detection.
func checkNotUpgraded(ctx context.Context, hrs *hrWatch) error {
	list, err := hrs.list(ctx)
	if err != nil {
		return err
	}
	if up := upgraded(list); len(up) > 0 {
		return fmt.Errorf("helm-controller upgraded %d releases (%v): the fleet's status does not match what it computes", len(up), first(up, 5))
	}
	return nil
}

// sample is the counters read at one end of the steady-state window.
type sample struct {
	at                          time.Time
	controller, apiServer, etcd time.Duration
	reconciles                  float64
}

func takeSample(cp *controlPlane, p *processes) (sample, error) {
	s := sample{at: time.Now()}
	var err error
	if s.controller, err = p.cpu(); err != nil {
		return s, err
	}
	if s.apiServer, err = harness.CPUTime(cp.apiServerPID); err != nil {
		return s, err
	}
	if s.etcd, err = harness.CPUTime(cp.etcdPID); err != nil {
		return s, err
	}
	s.reconciles, err = p.reconciles()
	return s, err
}

// steadyState is what the steady-state window measured: the counters at
// its two ends, and the controller's resident memory at its end (with
// shards, the sum and each process's).
type steadyState struct {
	start, end sample
	memory     harness.Memory
	each       []harness.Memory
}

// window is the steady state's time interval.
func (st steadyState) window() Window { return Window{Start: st.start.at, End: st.end.at} }

// measureSteadyState lets the passes the corrections triggered finish,
// then samples the counters at both ends of a window in which the harness
// sends nothing, and reads the controller's memory at its end.
func measureSteadyState(ctx context.Context, window time.Duration, cp *controlPlane, p *processes) (steadyState, error) {
	var st steadyState
	if err := harness.Sleep(ctx, settle); err != nil {
		return st, err
	}
	var err error
	if st.start, err = takeSample(cp, p); err != nil {
		return st, err
	}
	if err := harness.Sleep(ctx, window); err != nil {
		return st, err
	}
	if st.end, err = takeSample(cp, p); err != nil {
		return st, err
	}
	if err := p.exited(); err != nil {
		return st, err
	}
	st.memory, st.each, err = p.memory()
	return st, err
}

// collect reads the controller user's requests in the convergence and
// steady-state windows from cp's audit log, and fills in res's figures of
// the two: the requests, the CPU, the reconciles and the memory.
func collect(ctx context.Context, res *Result, cp *controlPlane, user string, convergence Window, cpu time.Duration, st steadyState) error {
	if err := harness.Sleep(ctx, auditFlush); err != nil {
		return err
	}
	counts, err := CountRequests(cp.auditLog, user, convergence, st.window())
	if err != nil {
		return err
	}
	res.ConvergenceSeconds, res.ConvergenceCPUSeconds = convergence.End.Sub(convergence.Start).Seconds(), cpu.Seconds()
	res.ConvergenceRequests, res.Requests, res.Memory = counts[0], counts[1], st.memory
	res.derive(st.start, st.end)
	return nil
}

// first returns at most n of s, for error messages.
func first(s []string, n int) []string { return s[:min(n, len(s))] }
