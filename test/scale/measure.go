package scale

import (
	"context"
	"fmt"
	"strings"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/test/harness"
)

// machineTemplate is the kind of the fleet's drifted templates, at the
// version the chart renders.
var machineTemplate = schema.GroupVersionKind{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta1", Kind: "Metal3MachineTemplate"}

// Poll intervals: while the fleet converges its HelmReleases are listed
// every millisecond per release, at least every 250 ms and at most every
// second (a list of 1,000 costs the API server CPU the controller needs);
// the one template and HelmRelease of a reaction are read every 10 ms.
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

// reactionImageURL is the drift written during the steady state: an image
// server no release renders.
const reactionImageURL = "http://10.10.10.99/images/ubuntu.qcow2"

// converge waits until every HelmRelease has converged (pending), then
// checks the outcome: for the add-on, that no Metal3MachineTemplate still
// points at the bootstrap image server; for helm-controller, that it
// upgraded no release.
func (r *run) converge(ctx context.Context) error {
	var pending map[string]int
	logged := time.Now()
	every := min(max(time.Duration(r.n)*convergePollPerRelease, convergePollFloor), convergePollCeiling)
	err := wait.PollUntilContextTimeout(ctx, every, r.cfg.ConvergeTimeout, true, func(ctx context.Context) (bool, error) {
		if err := r.exited(); err != nil {
			return false, err
		}
		var err error
		pending, err = r.pending(ctx)
		if err == nil && time.Since(logged) > progressEvery {
			r.logf("N=%d: %s after start, not in sync yet by reason: %v", r.n, time.Since(r.started).Round(time.Second), pending)
			logged = time.Now()
		}
		return err == nil && len(pending) == 0, err
	})
	if err != nil {
		return fmt.Errorf("%w; HelmReleases not converged, by reason: %v", err, pending)
	}
	r.converged = time.Now()
	r.convergence = Window{Start: r.started, End: r.converged}
	r.res.ConvergenceSeconds = r.converged.Sub(r.started).Seconds()
	cpu, err := r.controllerCPU()
	if err != nil {
		return err
	}
	r.res.ConvergenceCPUSeconds = cpu.Seconds()
	if !r.target.IsHelmController() {
		b, err := r.breakdown()
		if err != nil {
			return err
		}
		b.CPUSeconds = cpu.Seconds()
		r.res.Breakdown = &b
	}
	if r.target.IsHelmController() {
		return r.checkNotUpgraded(ctx)
	}
	return r.fleet.Healed(ctx, r.env.Client, r.n)
}

// pending lists the HelmReleases that have not converged yet, counted by
// reason: notInSync for the add-on, notReconciled for helm-controller.
func (r *run) pending(ctx context.Context) (map[string]int, error) {
	list, err := r.helmReleases(ctx)
	if err != nil {
		return nil, err
	}
	if r.target.IsHelmController() {
		return notReconciled(list), nil
	}
	return notInSync(list), nil
}

// helmReleases lists the fleet's HelmReleases from the harness's informer,
// without copies: the callers only read them.
func (r *run) helmReleases(ctx context.Context) ([]helmv2.HelmRelease, error) {
	var list helmv2.HelmReleaseList
	if err := r.hrs.List(ctx, &list); err != nil {
		return nil, err
	}
	if len(list.Items) != r.n {
		return nil, fmt.Errorf("found %d HelmReleases, want %d", len(list.Items), r.n)
	}
	return list.Items, nil
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
// "Fulfilling prerequisites", which at 1,000 releases on a 30 s interval
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
func (r *run) checkNotUpgraded(ctx context.Context) error {
	list, err := r.helmReleases(ctx)
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

func (r *run) sample() (sample, error) {
	s := sample{at: time.Now()}
	var err error
	if s.controller, err = r.controllerCPU(); err != nil {
		return s, err
	}
	if s.apiServer, err = harness.CPUTime(r.apiServerPID); err != nil {
		return s, err
	}
	if s.etcd, err = harness.CPUTime(r.etcdPID); err != nil {
		return s, err
	}
	s.reconciles, err = r.reconciles()
	return s, err
}

// measureSteadyState lets the passes the corrections triggered finish,
// then samples the counters at both ends of a window in which the harness
// sends nothing, and reads the controller's memory at its end.
func (r *run) measureSteadyState(ctx context.Context) error {
	if err := harness.Sleep(ctx, r.cfg.Settle); err != nil {
		return err
	}
	var err error
	if r.windowStart, err = r.sample(); err != nil {
		return err
	}
	if err := harness.Sleep(ctx, r.cfg.Window); err != nil {
		return err
	}
	if r.windowEnd, err = r.sample(); err != nil {
		return err
	}
	if err := r.exited(); err != nil {
		return err
	}
	r.steadyState = Window{Start: r.windowStart.at, End: r.windowEnd.at}
	if r.res.Memory, r.res.ShardMemory, err = r.memory(); err != nil {
		return err
	}
	if !r.target.IsHelmController() {
		m, err := ReadGoMemory(r.metricsAddr)
		if err != nil {
			return err
		}
		r.res.GoMemory = &m
	}
	return r.saveSteadyHeap(ctx)
}

// countRequests reads the controller user's requests in the convergence
// and steady-state windows from the audit log, and derives the figures.
func (r *run) countRequests(ctx context.Context) error {
	if err := harness.Sleep(ctx, auditFlush); err != nil {
		return err
	}
	counts, err := CountRequests(r.auditLog, r.target.User, r.convergence, r.steadyState)
	if err != nil {
		return err
	}
	r.res.ConvergenceRequests, r.res.Requests = counts[0], counts[1]
	r.res.derive(r.windowStart, r.windowEnd)
	return nil
}

// reactionSamples is how many in-sync releases get a drift, one after
// the other: one sample says little about a race between watches.
const reactionSamples = 3

// measureReaction writes a drift into a Metal3MachineTemplate of a few
// releases that were in sync from the start, one after the other, and
// times each until the template is corrected, then until its HelmRelease
// reports DriftCorrected. helm-controller in warn mode corrects nothing:
// it is not measured.
func (r *run) measureReaction(ctx context.Context) error {
	if r.target.IsHelmController() {
		return nil
	}
	for k := range min(reactionSamples, r.n/2) {
		i := 2*k + 1 // Drifted(i) is false: in sync since setup.
		s, err := r.reactOnce(ctx, Namespace(i))
		if err != nil {
			return err
		}
		r.res.Reactions = append(r.res.Reactions, s)
	}
	return nil
}

func (r *run) reactOnce(ctx context.Context, ns string) (Reaction, error) {
	tmpl := &unstructured.Unstructured{}
	drift := r.fleet.React
	tmpl.SetGroupVersionKind(drift.GVK)
	key := client.ObjectKey{Namespace: ns, Name: drift.Name}
	tmpl.SetNamespace(ns)
	tmpl.SetName(key.Name)
	start := time.Now()
	if err := r.env.Client.Patch(ctx, tmpl, client.RawPatch(types.MergePatchType, []byte(drift.Patch))); err != nil {
		return Reaction{}, fmt.Errorf("failed to write the drift: %w", err)
	}
	out := Reaction{Namespace: ns}
	err := wait.PollUntilContextTimeout(ctx, reactionPoll, reactionTimeout, true, func(ctx context.Context) (bool, error) {
		if err := r.env.Client.Get(ctx, key, tmpl); err != nil {
			return false, err
		}
		return drift.Healed(tmpl), nil
	})
	if err != nil {
		return out, fmt.Errorf("template %s/%s not corrected: %w", ns, key.Name, err)
	}
	out.HealedSeconds = time.Since(start).Seconds()
	hr := &helmv2.HelmRelease{}
	err = wait.PollUntilContextTimeout(ctx, reactionPoll, reactionTimeout, true, func(ctx context.Context) (bool, error) {
		if err := r.env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: releaseName}, hr); err != nil {
			return false, err
		}
		c := apimeta.FindStatusCondition(hr.Status.Conditions, api.TemplatesInSyncCondition)
		return c != nil && c.Status == metav1.ConditionTrue && c.Reason == api.DriftCorrectedReason, nil
	})
	if err != nil {
		return out, fmt.Errorf("HelmRelease %s/%s did not report %s: %w", ns, releaseName, api.DriftCorrectedReason, err)
	}
	out.ReportedSeconds = time.Since(start).Seconds()
	return out, nil
}

// first returns at most n of s, for error messages.
func first(s []string, n int) []string { return s[:min(n, len(s))] }
