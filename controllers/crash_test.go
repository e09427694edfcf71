package controllers_test

import (
	"fmt"
	"slices"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/internal/manifest"
)

// templateKinds and consumerKinds are what the crash test counts and checks.
var (
	templateKinds = [][2]string{
		{m3, "Metal3MachineTemplate"}, {m3, "Metal3DataTemplate"}, {m3, "LockedMachineTemplate"},
	}
	consumerKinds = [][2]string{
		{md, "MachineDeployment"}, {cp, "KubeadmControlPlane"},
		{"controlplane.cluster.x-k8s.io/v1alpha1", "RKE2ControlPlane"},
	}
)

// counts returns how many objects of each template kind exist.
func (w *world) counts() map[string]int {
	out := map[string]int{}
	for _, k := range templateKinds {
		out[k[1]] = len(w.list(k[0], k[1]))
	}
	return out
}

// expectNoDanglingRefs checks every reference of every consumer and
// template names an object that exists, except the names in allowMissing.
func (w *world) expectNoDanglingRefs(allowMissing ...string) {
	w.t.Helper()
	for _, k := range append(append([][2]string{}, consumerKinds...), templateKinds...) {
		for _, o := range w.list(k[0], k[1]) {
			refs, err := manifest.References(&o)
			w.g.Expect(err).NotTo(HaveOccurred())
			for _, r := range refs {
				target := &metav1.PartialObjectMetadata{}
				target.SetGroupVersionKind(r.Target.WithVersion(versionOf(r.Target.Group)))
				err := env.Client.Get(w.ctx, client.ObjectKey{Namespace: w.ns, Name: r.Target.Name}, target)
				if slices.Contains(allowMissing, r.Target.Kind+"/"+r.Target.Name) {
					continue
				}
				w.g.Expect(err).NotTo(HaveOccurred(), "%s %s references missing %s", o.GetKind(), o.GetName(), r.Target)
			}
		}
	}
}

func versionOf(group string) string {
	switch group {
	case "infrastructure.cluster.x-k8s.io":
		return "v1beta1"
	default:
		return "v1beta2"
	}
}

// TestCrashAfterEachWrite kills the controller after every single write of
// every strategy (the fault-injecting client refuses the next write), then
// lets it run again. It must converge to what an uninterrupted run
// produces: same objects, no duplicate, no dangling reference, and then a
// pass that writes nothing.
func TestCrashAfterEachWrite(t *testing.T) {
	cases := []struct {
		name          string
		live, release values
		strategy      string // strategy annotation
		applyMethod   string
		// gap is the write after which a reference may dangle until the next
		// pass: a recreate has deleted the template and not yet created it.
		gap     int // -1 when there is no such gap
		missing string
	}{
		{name: "in-place", gap: -1, live: bootstrap, release: mgmt, strategy: "auto", applyMethod: "csa"},
		{name: "rotate data templates", gap: -1, live: metaLive, release: metaRelease, strategy: "auto", applyMethod: "csa"},
		{name: "rotate locked machine template", gap: -1, live: lockedLive, release: lockedRelease, strategy: "auto", applyMethod: "csa"},
		// Only a template nothing uses is recreated; nothing can dangle.
		{name: "recreate", live: spareLive, release: spareRelease, strategy: "auto", applyMethod: "ssa", gap: -1},
	}
	for _, tc := range cases {
		sc := scenario{annotations: withStrategy(tc.strategy), live: tc.live, release: tc.release, applyMethod: tc.applyMethod}
		var total int
		var want map[string]int
		t.Run(tc.name+"/uninterrupted", func(t *testing.T) {
			w := newWorld(t, sc)
			total = w.reconcile()
			want = w.counts()
			w.g.Expect(total).To(BeNumerically(">", 0))
		})
		for crashAfter := 0; crashAfter < total; crashAfter++ {
			t.Run(fmt.Sprintf("%s/crash after %d of %d writes", tc.name, crashAfter, total), func(t *testing.T) {
				w := newWorld(t, sc)
				w.failAfter.Store(int32(crashAfter))
				w.g.Expect(w.reconcile()).To(Equal(crashAfter))
				if crashAfter == tc.gap {
					w.expectNoDanglingRefs(tc.missing)
				} else {
					w.expectNoDanglingRefs()
				}
				w.failAfter.Store(-1)
				// Converge: a few passes at most, each one finishing what
				// the crash left; the next assertion proves it converged.
				for pass := 0; pass < 3; pass++ {
					if w.reconcile() == 0 {
						break
					}
				}
				w.g.Expect(w.reconcile()).To(Equal(0), "converged")
				w.g.Expect(w.counts()).To(Equal(want), "no duplicate and nothing missing")
				w.expectNoDanglingRefs()
				w.g.Expect(w.condition().Status).To(Equal(metav1.ConditionTrue), w.condition().Message)
			})
		}
	}
}
