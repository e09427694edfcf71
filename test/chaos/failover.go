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
)

// InvTakeover is the failover scenario's own invariant: the other replica
// acquired the Lease after the leader's SIGKILL, within the convergence
// timeout. How long it took is reported beside the lease
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

// lease is the failover scenario's --leader-election-lease-duration, short
// enough that a takeover fits in a run; the renew deadline and retry period
// follow from it (LeaseTimes).
const lease = 15 * time.Second

// FailoverSpec runs two replicas with leader election: it starts a second
// replica once the first holds the Lease, waits until corrections are in
// flight (a tenth of the fleet in sync, at least one), SIGKILLs the replica
// the Lease names, and waits until the other acquires it. The survivor
// runs on; the kill is the fault's end. Besides every scenario's
// invariants, the takeover must happen and no change be stored twice.
func FailoverSpec(ctx context.Context, in Input) (res Result, err error) {
	w := newWorld(in, ScenarioFailover, worldOptions{leaderElection: true})
	defer func() { w.stop(err) }()
	if err := w.setUp(ctx, nil); err != nil {
		return w.res, err
	}
	if err := w.step("inject the fault", func() error { return failover(ctx, w) }); err != nil {
		return w.res, err
	}
	w.faultsStopped(ctx)
	return w.conclude(ctx, checks{lease: true, doubleWrite: true}, func([]Write) error {
		w.res.Checked = append(w.res.Checked, InvTakeover)
		return nil
	})
}

// failover kills the leader of two replicas while corrections run, and
// records the takeover.
func failover(ctx context.Context, w *world) error {
	renew, retry := LeaseTimes(lease)
	first, err := waitLease(ctx, w, firstLeaseTimeout, func(l *coordinationv1.Lease) bool { return holder(l) != "" })
	if err != nil {
		return fmt.Errorf("the first replica did not take the Lease %s/%s: %w", runtimeNamespace, leaseName, err)
	}
	second, err := w.startReplica("template-drift-controller-2")
	if err != nil {
		return err
	}
	w.others = append(w.others, second)
	inSync, err := w.waitInSync(ctx, max(1, w.in.N/10))
	if err != nil {
		return err
	}
	before, err := getLease(ctx, w)
	if err != nil {
		return fmt.Errorf("failed to read the Lease: %w", err)
	}
	leader, follower := w.controller, second
	if holder(before) != holder(first) {
		leader, follower = second, w.controller
	}
	w.samplePeakOf(leader)
	w.samplePeakOf(follower)
	killed := time.Now()
	leader.Kill()
	w.controller = follower
	// The Lease as the killed leader left it: its last renewal may have
	// come after the read above.
	if last, err := getLease(ctx, w); err == nil && holder(last) == holder(before) {
		before = last
	}
	w.res.Fault = fmt.Sprintf("SIGKILL of the leader of 2 replicas at %d/%d in sync; lease %s, renew %s, retry %s",
		inSync, w.in.N, lease, renew, retry)
	w.in.Logf("%s: killed the leader %s at %d/%d in sync", w.name, holder(before), inSync, w.in.N)
	after, err := waitLease(ctx, w, convergeTimeout, func(l *coordinationv1.Lease) bool {
		return holder(l) != "" && holder(l) != holder(before)
	})
	if err != nil {
		w.res.violate(InvTakeover, fmt.Sprintf("no other replica acquired the Lease within %s of the kill: %v", convergeTimeout, err))
		return nil
	}
	t, err := TakeoverOf(before.Spec, after.Spec, killed)
	if err != nil {
		w.res.violate(InvTakeover, err.Error())
		return nil
	}
	w.res.Takeover = &t
	w.in.Logf("%s: %s acquired the Lease %.1fs after the kill (lease %s)", w.name, t.Holder, t.AfterKillSeconds, lease)
	return nil
}

// waitLease polls the controller's Lease until cond holds of it, for at
// most timeout, and returns it.
func waitLease(ctx context.Context, w *world, timeout time.Duration, cond func(*coordinationv1.Lease) bool) (*coordinationv1.Lease, error) {
	var got *coordinationv1.Lease
	err := wait.PollUntilContextTimeout(ctx, leasePoll, timeout, true, func(ctx context.Context) (bool, error) {
		l, err := getLease(ctx, w)
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
func getLease(ctx context.Context, w *world) (*coordinationv1.Lease, error) {
	l := &coordinationv1.Lease{}
	if err := w.env.Client.Get(ctx, client.ObjectKey{Namespace: runtimeNamespace, Name: leaseName}, l); err != nil {
		return nil, err
	}
	return l, nil
}

// firstLeaseTimeout bounds the wait for the first replica to take the
// Lease, which exists not yet.
const firstLeaseTimeout = time.Minute
