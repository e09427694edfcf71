package chaos

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestLeaseTimes(t *testing.T) {
	g := NewWithT(t)
	renew, retry := LeaseTimes(15 * time.Second)
	g.Expect([]time.Duration{renew, retry}).To(Equal([]time.Duration{10 * time.Second, 2 * time.Second}))
	g.Expect(leaderElectionFlags(15 * time.Second)).To(Equal([]string{"--enable-leader-election=true",
		"--leader-election-lease-duration=15s", "--leader-election-renew-deadline=10s", "--leader-election-retry-period=2s"}))
}

func TestTakeoverOf(t *testing.T) {
	killed := time.Date(2026, 12, 1, 15, 0, 10, 0, time.UTC)
	at := func(d time.Duration) *metav1.MicroTime { m := metav1.NewMicroTime(killed.Add(d)); return &m }
	spec := func(holder string, acquired, renewed *metav1.MicroTime, transitions int32) coordinationv1.LeaseSpec {
		return coordinationv1.LeaseSpec{HolderIdentity: ptrTo(holder), LeaseDurationSeconds: ptrTo[int32](15),
			AcquireTime: acquired, RenewTime: renewed, LeaseTransitions: ptrTo(transitions)}
	}
	before := spec("host_a", at(-30*time.Second), at(-1500*time.Millisecond), 0)
	tests := []struct {
		name string
		// before and after are the Lease as the killed leader left it and
		// as it was found later.
		before, after coordinationv1.LeaseSpec
		// want is the takeover, or wantErr a substring of the error.
		want    Takeover
		wantErr string
	}{
		{name: "taken over once the lease expired", before: before, after: spec("host_b", at(14*time.Second), at(14*time.Second), 1),
			want: Takeover{Killed: "host_a", Holder: "host_b", LeaseSeconds: 15, AfterKillSeconds: 14, RenewedBeforeKillSeconds: 1.5, AfterExpirySeconds: 0.5}},
		{name: "a renewal just before the kill", before: spec("host_a", at(-30*time.Second), at(-10*time.Millisecond), 3),
			after: spec("host_b", at(16*time.Second), at(16*time.Second), 4),
			want:  Takeover{Killed: "host_a", Holder: "host_b", LeaseSeconds: 15, AfterKillSeconds: 16, RenewedBeforeKillSeconds: 0.01, AfterExpirySeconds: 1.01}},
		{name: "still the killed leader's", before: before, after: before, wantErr: "still held by the killed leader host_a"},
		{name: "not acquired yet", before: before, after: coordinationv1.LeaseSpec{HolderIdentity: ptrTo("host_b")}, wantErr: "no holder or acquireTime"},
		{name: "released, no holder", before: before, after: spec("", at(time.Second), at(time.Second), 1), wantErr: "no holder or acquireTime"},
		{name: "no renewal before", before: coordinationv1.LeaseSpec{HolderIdentity: ptrTo("host_a")}, after: before, wantErr: "before the kill has no holder"},
		{name: "no transition", before: before, after: spec("host_b", at(14*time.Second), at(14*time.Second), 0), wantErr: "leaseTransitions did not grow"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			got, err := TakeoverOf(tt.before, tt.after, killed)
			if tt.wantErr != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tt.wantErr)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got.Killed).To(Equal(tt.want.Killed))
			g.Expect(got.Holder).To(Equal(tt.want.Holder))
			g.Expect(got.LeaseSeconds).To(Equal(tt.want.LeaseSeconds))
			g.Expect(got.AfterKillSeconds).To(BeNumerically("~", tt.want.AfterKillSeconds, 1e-6))
			g.Expect(got.RenewedBeforeKillSeconds).To(BeNumerically("~", tt.want.RenewedBeforeKillSeconds, 1e-6))
			g.Expect(got.AfterExpirySeconds).To(BeNumerically("~", tt.want.AfterExpirySeconds, 1e-6))
		})
	}
	g := NewWithT(t)
	g.Expect(holder(nil)).To(BeEmpty())
	g.Expect(holder(&coordinationv1.Lease{Spec: before})).To(Equal("host_a"))
	g.Expect(total(map[string]int{"a": 2, "b": 3})).To(Equal(5))
}

func ptrTo[T any](v T) *T { return &v }
