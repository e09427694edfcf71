package chaos

import "fmt"

// InvNoRetryStorm is the lossy scenario's own invariant: its requests
// stay within maxRequestRatio times those of the fault-free run of the same
// fleet, both as the audit log counts them (the requests that reached the
// API server) and as the proxy counts them (faulted ones included): the
// controller backs off instead of retrying in a storm.
const InvNoRetryStorm = "no-retry-storm"

// maxRequestRatio bounds the lossy run's requests against the fault-free
// run's (InvNoRetryStorm).
const maxRequestRatio = 2.0

// lossy describes the lossy scenario's fault: the proxy, started with the
// control plane, faults from the controller's first request to the check.
func (r *run) lossy() {
	if r.faultFree == nil {
		r.res.Fault = "none: the fault-free run, through the same proxy"
		return
	}
	r.res.Fault = fmt.Sprintf("%g%% of requests: 500, 429 (Retry-After: 1), a %s stall, or the response lost after forwarding (a watch cut midway)",
		r.faultRate*100, stallFor)
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
