package chaos

import (
	"context"
	"errors"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/testenv"
	"github.com/templatedrift/template-drift-controller/test/harness"
)

// InvTakeover is the failover scenario's own invariant: the other replica
// acquired the Lease after the leader's SIGKILL, within
// CHAOS_CONVERGE_TIMEOUT. How long it took is reported beside the lease
// duration, not asserted.
const InvTakeover = "takeover"

// runtimeNamespace is the failover replicas' RUNTIME_NAMESPACE, where the
// controller keeps its Lease, as Flux's controllers run in flux-system.
const runtimeNamespace = "flux-system"

// leaseName is the controller's Lease without a watch label selector
// (cmd/template-drift-controller leaderElectionID).
const leaseName = api.ControllerName + "-leader-election"

// leaderElectionFlags are the failover replicas' leader-election flags
// (fluxcd/pkg/runtime/leaderelection) for a lease duration d.
func leaderElectionFlags(d time.Duration) []string {
	renew, retry := LeaseTimes(d)
	return []string{"--enable-leader-election=true", "--leader-election-lease-duration=" + d.String(),
		"--leader-election-renew-deadline=" + renew.String(), "--leader-election-retry-period=" + retry.String()}
}

// Takeover is a failover as the Lease tells it.
type Takeover struct {
	// Killed is the killed leader's identity, Holder its successor's.
	Killed string `json:"killed"`
	Holder string `json:"holder"`
	// LeaseSeconds is the Lease's leaseDurationSeconds.
	LeaseSeconds float64 `json:"leaseSeconds"`
	// AfterKillSeconds is from the kill to the successor's acquireTime.
	AfterKillSeconds float64 `json:"afterKillSeconds"`
	// RenewedBeforeKillSeconds is from the killed leader's last renewTime
	// to the kill.
	RenewedBeforeKillSeconds float64 `json:"renewedBeforeKillSeconds"`
	// AfterExpirySeconds is from the killed leader's lease expiry (its
	// last renewTime plus the lease duration) to the acquireTime: client-go's
	// follower takes the Lease once it has seen no renewal for the lease
	// duration, and looks every retry period.
	AfterExpirySeconds float64 `json:"afterExpirySeconds"`
}

// TakeoverOf reads a failover from the Lease as the killed leader left it
// (before) and as its successor wrote it (after), with the time of the
// kill. It fails when after is not a new holder's.
func TakeoverOf(before, after coordinationv1.LeaseSpec, killed time.Time) (Takeover, error) {
	switch {
	case before.HolderIdentity == nil || before.RenewTime == nil || before.LeaseDurationSeconds == nil:
		return Takeover{}, errors.New("the Lease before the kill has no holder, renewTime or leaseDurationSeconds")
	case after.HolderIdentity == nil || *after.HolderIdentity == "" || after.AcquireTime == nil:
		return Takeover{}, errors.New("the Lease after the kill has no holder or acquireTime")
	case *after.HolderIdentity == *before.HolderIdentity:
		return Takeover{}, fmt.Errorf("the Lease is still held by the killed leader %s", *before.HolderIdentity)
	case after.LeaseTransitions != nil && before.LeaseTransitions != nil && *after.LeaseTransitions <= *before.LeaseTransitions:
		return Takeover{}, fmt.Errorf("the Lease's leaseTransitions did not grow (%d, then %d)", *before.LeaseTransitions, *after.LeaseTransitions)
	}
	lease := time.Duration(*before.LeaseDurationSeconds) * time.Second
	renewed, acquired := before.RenewTime.Time, after.AcquireTime.Time
	return Takeover{
		Killed: *before.HolderIdentity, Holder: *after.HolderIdentity, LeaseSeconds: lease.Seconds(),
		AfterKillSeconds:         acquired.Sub(killed).Seconds(),
		RenewedBeforeKillSeconds: killed.Sub(renewed).Seconds(),
		AfterExpirySeconds:       acquired.Sub(renewed.Add(lease)).Seconds(),
	}, nil
}

// holder is a Lease's holderIdentity, or "".
func holder(l *coordinationv1.Lease) string {
	if l == nil || l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// leasePoll is how often the harness reads the Lease.
const leasePoll = 100 * time.Millisecond

// waitLease polls the controller's Lease until cond holds of it, for at
// most timeout, and returns it.
func (r *run) waitLease(ctx context.Context, timeout time.Duration, cond func(*coordinationv1.Lease) bool) (*coordinationv1.Lease, error) {
	var got *coordinationv1.Lease
	err := wait.PollUntilContextTimeout(ctx, leasePoll, timeout, true, func(ctx context.Context) (bool, error) {
		l, err := r.getLease(ctx)
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		got = l
		return cond(l), nil
	})
	return got, err
}

// getLease reads the controller's Lease.
func (r *run) getLease(ctx context.Context) (*coordinationv1.Lease, error) {
	l := &coordinationv1.Lease{}
	if err := r.env.Client.Get(ctx, client.ObjectKey{Namespace: runtimeNamespace, Name: leaseName}, l); err != nil {
		return nil, err
	}
	return l, nil
}

// firstLeaseTimeout bounds the wait for the first replica to take the
// Lease, which exists not yet.
const firstLeaseTimeout = time.Minute

// failover starts a second replica once the first holds the Lease, waits
// until corrections are in flight (a tenth of the fleet in sync, at least
// one), SIGKILLs the replica the Lease names, and waits until the other
// acquires it. The survivor runs on; the kill is the fault's end.
func (r *run) failover(ctx context.Context) error {
	renew, retry := LeaseTimes(r.cfg.Lease)
	first, err := r.waitLease(ctx, firstLeaseTimeout, func(l *coordinationv1.Lease) bool { return holder(l) != "" })
	if err != nil {
		return fmt.Errorf("the first replica did not take the Lease %s/%s: %w", runtimeNamespace, leaseName, err)
	}
	second, err := r.startReplica("template-drift-controller-2")
	if err != nil {
		return err
	}
	r.others = append(r.others, second)
	inSync, err := r.waitInSync(ctx, max(1, r.cfg.N/10))
	if err != nil {
		return err
	}
	lease, err := r.getLease(ctx)
	if err != nil {
		return fmt.Errorf("failed to read the Lease: %w", err)
	}
	leader, follower := r.controller, second
	if holder(lease) != holder(first) {
		leader, follower = second, r.controller
	}
	r.samplePeakOf(leader)
	r.samplePeakOf(follower)
	killed := time.Now()
	leader.Kill()
	r.controller = follower
	// The Lease as the killed leader left it: its last renewal may have
	// come after the read above.
	if last, err := r.getLease(ctx); err == nil && holder(last) == holder(lease) {
		lease = last
	}
	r.res.Fault = fmt.Sprintf("SIGKILL of the leader of 2 replicas at %d/%d in sync; lease %s, renew %s, retry %s",
		inSync, r.cfg.N, r.cfg.Lease, renew, retry)
	r.logf("%s: killed the leader %s at %d/%d in sync", r.scenario, holder(lease), inSync, r.cfg.N)
	after, err := r.waitLease(ctx, r.cfg.ConvergeTimeout, func(l *coordinationv1.Lease) bool {
		return holder(l) != "" && holder(l) != holder(lease)
	})
	if err != nil {
		r.res.violate(InvTakeover, fmt.Sprintf("no other replica acquired the Lease within %s of the kill: %v", r.cfg.ConvergeTimeout, err))
		return nil
	}
	t, err := TakeoverOf(lease.Spec, after.Spec, killed)
	if err != nil {
		r.res.violate(InvTakeover, err.Error())
		return nil
	}
	r.res.Takeover = &t
	r.logf("%s: %s acquired the Lease %.1fs after the kill (lease %s)", r.scenario, t.Holder, t.AfterKillSeconds, r.cfg.Lease)
	return nil
}

// waitInSync waits until at least n releases have converged (or, on a
// fleet that converged before, all of them), and returns how many have.
func (r *run) waitInSync(ctx context.Context, n int) (int, error) {
	inSync := 0
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, r.cfg.ConvergeTimeout, true, func(ctx context.Context) (bool, error) {
		if r.controller.Exited() {
			return false, fmt.Errorf("the controller exited (see %s)", r.controller.LogPath)
		}
		pending, err := r.pending(ctx)
		if err != nil {
			return false, nil //nolint:nilerr // poll on
		}
		inSync = r.cfg.N - total(pending)
		return inSync >= n, nil
	})
	return inSync, err
}

// total sums counts.
func total(counts map[string]int) int {
	n := 0
	for _, c := range counts {
		n += c
	}
	return n
}

// samplePeakOf folds p's peak RSS into the result's largest so far.
func (r *run) samplePeakOf(p *testenv.Process) {
	if pid := p.PID(); pid != 0 {
		if m, err := harness.ReadMemory(pid); err == nil {
			r.res.PeakRSSBytes = max(r.res.PeakRSSBytes, m.Peak)
		}
	}
}
