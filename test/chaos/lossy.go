package chaos

import (
	"context"
	"fmt"
)

// InvNoRetryStorm is the lossy scenario's own invariant: its requests
// stay within maxRequestRatio times those of the fault-free run of the same
// fleet, both as the audit log counts them (the requests that reached the
// API server) and as the proxy counts them (faulted ones included): the
// controller backs off instead of retrying in a storm.
const InvNoRetryStorm = "no-retry-storm"

// maxRequestRatio bounds the lossy run's requests against the fault-free
// run's (InvNoRetryStorm).
const maxRequestRatio = 2.0

// faultRate is the share of requests the lossy scenario's proxy faults:
// enough that every pass of a small fleet meets faults.
const faultRate = 0.05

// LossySpec puts a fault-injecting proxy between the controller and the API
// server: first without faults, on a control plane of its own (in
// Dir/fault-free), then with faultRate of the requests faulted to the end.
// Besides every scenario's invariants, no change may be stored twice, and
// the faulted run's requests must stay within maxRequestRatio of the
// fault-free run's.
func LossySpec(ctx context.Context, in Input) (Result, error) {
	faultFree, err := lossyRun(ctx, in.in("fault-free"), 0, nil)
	if err != nil {
		return Result{Scenario: ScenarioLossy, N: in.N, FaultFree: &faultFree}, err
	}
	return lossyRun(ctx, in, faultRate, &faultFree)
}

// lossyRun is one run through the proxy at rate, checked against
// faultFree's requests unless it is the fault-free run (nil).
func lossyRun(ctx context.Context, in Input, rate float64, faultFree *Result) (res Result, err error) {
	w := newWorld(in, ScenarioLossy, worldOptions{faults: &FaultPlan{Rate: rate, Seed: in.Seed}})
	w.res.FaultFree = faultFree
	w.res.Fault = fmt.Sprintf("%g%% of requests: 500, 429 (Retry-After: 1), a %s stall, or the response lost after forwarding (a watch cut midway)",
		rate*100, stallFor)
	if faultFree == nil {
		w.name = faultFreeRow
		w.res.Fault = "none: the fault-free run, through the same proxy"
	}
	defer func() { w.stop(err) }()
	if err := w.setUp(ctx, nil); err != nil {
		return w.res, err
	}
	// The proxy faults until the end: convergence is timed from the
	// controller's start, and no release is in sync when faults stop.
	w.faultsDone = w.started
	if faultFree == nil {
		return w.conclude(ctx, checks{doubleWrite: true}, nil)
	}
	return w.conclude(ctx, checks{doubleWrite: true}, func([]Write) error {
		w.res.Checked = append(w.res.Checked, InvNoRetryStorm)
		for _, v := range CheckRetryStorm(w.res, *faultFree) {
			w.res.violate(v.Invariant, v.What)
		}
		return nil
	})
}

// RequestRatios are the lossy run's requests over the fault-free run's,
// from the audit log and from the proxy's counts (0 when a fault-free
// count is 0).
func RequestRatios(lossy, faultFree Result) (audit, proxy float64) {
	if faultFree.Requests > 0 {
		audit = float64(lossy.Requests) / float64(faultFree.Requests)
	}
	if lossy.Proxy != nil && faultFree.Proxy != nil && faultFree.Proxy.Requests > 0 {
		proxy = float64(lossy.Proxy.Requests) / float64(faultFree.Proxy.Requests)
	}
	return audit, proxy
}

// CheckRetryStorm checks the lossy run against its fault-free run: the
// requests within maxRequestRatio times, by either count.
func CheckRetryStorm(lossy, faultFree Result) []Violation {
	audit, proxy := RequestRatios(lossy, faultFree)
	var out []Violation
	if faultFree.Requests == 0 || faultFree.Proxy == nil || faultFree.Proxy.Requests == 0 {
		return []Violation{{InvNoRetryStorm, "the fault-free run counted no requests to compare with"}}
	}
	if audit > maxRequestRatio {
		out = append(out, Violation{InvNoRetryStorm, fmt.Sprintf("%d requests reached the API server, %.2f× the fault-free run's %d",
			lossy.Requests, audit, faultFree.Requests)})
	}
	if proxy > maxRequestRatio {
		out = append(out, Violation{InvNoRetryStorm, fmt.Sprintf("the controller sent %d requests, %.2f× the fault-free run's %d",
			lossy.Proxy.Requests, proxy, faultFree.Proxy.Requests)})
	}
	return out
}
