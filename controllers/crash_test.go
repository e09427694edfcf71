package controllers_test

import (
	"fmt"
	"slices"
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/diff"
	"github.com/templatedrift/template-drift-controller/internal/manifest"
)

// earlierReplacement is a replacement of the locked mgmt-cp that an earlier
// rotation left, with every control plane still on it.
const earlierReplacement = "mgmt-cp-0000000000"

// onEarlierReplacement is the world after that rotation and a rollback to
// a manifest the original matches: the original marked, the replacement
// with its lineage, the control planes pointing at it. A pass moves them
// back, removes the mark, and a later one deletes the unused replacement.
var (
	onEarlierReplacementLive = withExtra(lockedLive, `---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: LockedMachineTemplate
metadata: {name: `+earlierReplacement+`}
spec:
  template:
    spec: {image: "http://192.168.100.2/images/ubuntu.qcow2", flavor: large}
`)
	onEarlierReplacement = func(o *unstructured.Unstructured) {
		original := manifest.ID{GroupKind: schema.GroupKind{Group: "infrastructure.cluster.x-k8s.io", Kind: "LockedMachineTemplate"},
			Namespace: o.GetNamespace(), Name: "mgmt-cp"}
		switch {
		case o.GetKind() == "LockedMachineTemplate" && o.GetName() == "mgmt-cp":
			o.SetAnnotations(merge(o.GetAnnotations(), map[string]string{api.SupersededByAnnotation: earlierReplacement}))
		case o.GetName() == earlierReplacement:
			o.SetAnnotations(merge(o.GetAnnotations(), map[string]string{
				api.ReplacesAnnotation: "mgmt-cp", api.SourceReleaseAnnotation: o.GetNamespace() + "/cluster.v1"}))
		case manifest.IsConsumer(o.GroupVersionKind().GroupKind()):
			changes, err := manifest.Repoint(o, original, earlierReplacement)
			if err != nil || len(changes) == 0 {
				return
			}
			if moved, err := diff.Apply(o, changes); err == nil {
				o.Object = moved.Object
			}
		}
	}
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
				target.SetGroupVersionKind(r.Template.WithVersion(versionOf(r.Template.Group)))
				err := w.tgt.Client.Get(w.ctx, client.ObjectKey{Namespace: w.ns, Name: r.Template.Name}, target)
				if slices.Contains(allowMissing, r.Template.Kind+"/"+r.Template.Name) {
					continue
				}
				w.g.Expect(err).NotTo(HaveOccurred(), "%s %s references missing %s", o.GetKind(), o.GetName(), r.Template)
			}
		}
	}
}

// expectRolledOnce checks every consumer of the locked template records
// the one approved rollout once: none was repointed twice.
func (w *world) expectRolledOnce() {
	w.t.Helper()
	hr := &helmv2.HelmRelease{}
	w.g.Expect(env.Client.Get(w.ctx, client.ObjectKeyFromObject(w.hr), hr)).To(Succeed())
	approved := hr.GetAnnotations()[api.ApproveRolloutAnnotation]
	for _, k := range consumerKinds {
		for _, o := range w.list(k[0], k[1]) {
			refs, err := manifest.References(&o)
			w.g.Expect(err).NotTo(HaveOccurred())
			if len(refs) > 0 && refs[0].Template.Kind == "LockedMachineTemplate" {
				w.g.Expect(o.GetAnnotations()).To(HaveKeyWithValue(api.RolloutsMadeAnnotation, approved), "%s %s", o.GetKind(), o.GetName())
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
// lets it run again. The writes include setting the move block on the
// Cluster and lifting it, which a crash after the first leaves undone. It must converge to what an uninterrupted run
// produces: same objects, no duplicate, no dangling reference, and then a
// pass that writes nothing.
func TestCrashAfterEachWrite(t *testing.T) {
	cases := []struct {
		name          string
		live, release values
		strategy      string // strategy annotation
		applyMethod   string
		// liveMutate edits the live objects before they are created.
		liveMutate func(*unstructured.Unstructured)
		// approve: the rollout policy is the default, deny; a first pass
		// (not counted) makes the corrections that roll nothing, and the
		// rollout it says waits is approved before the writes counted.
		approve bool
	}{
		{name: "in-place", live: bootstrap, release: mgmt, strategy: "auto", applyMethod: "csa"},
		{name: "rotate data templates", live: metaLive, release: metaRelease, strategy: "auto", applyMethod: "csa"},
		{name: "rotate locked machine template", live: lockedLive, release: lockedRelease, strategy: "auto", applyMethod: "csa"},
		// Only a template nothing uses is recreated; nothing can dangle.
		{name: "recreate", live: spareLive, release: spareRelease, strategy: "auto", applyMethod: "ssa"},
		// The way back: repoints to the original, its unmark, then the
		// clean-up's delete of the replacement on the next pass.
		{name: "way back and clean-up", live: onEarlierReplacementLive, release: lockedLive, strategy: "auto", applyMethod: "csa",
			liveMutate: onEarlierReplacement},
		// Each write of an approved rollout of 5 control planes: it goes on
		// under the same id after the crash, and rolls nothing twice.
		{name: "approved rollout", live: lockedLive, release: lockedRelease, strategy: "auto", applyMethod: "csa", approve: true},
	}
	for _, tc := range cases {
		sc := scenario{annotations: withStrategy(tc.strategy), live: tc.live, release: tc.release, applyMethod: tc.applyMethod, liveMutate: tc.liveMutate}
		if tc.approve {
			sc.annotations = merge(optedIn, map[string]string{api.StrategyAnnotation: tc.strategy})
		}
		prepare := func(w *world) {
			if !tc.approve {
				return
			}
			w.reconcile()
			ids := w.waitingIDs()
			w.g.Expect(ids).To(HaveLen(1), w.condition().Message)
			w.setAnnotations(merge(sc.annotations, map[string]string{api.ApproveRolloutAnnotation: ids[0]}))
			w.writes.Store(0)
		}
		var total int
		var want map[string]int
		t.Run(tc.name+"/uninterrupted", func(t *testing.T) {
			w := newWorld(t, sc)
			prepare(w)
			// Every write until the world is quiet: a clean-up deletes on
			// the pass after the one that made a replacement unused.
			for pass := 0; pass < 4; pass++ {
				n := w.reconcile()
				if n == 0 {
					break
				}
				total += n
			}
			want = w.counts()
			w.g.Expect(total).To(BeNumerically(">", 0))
		})
		for crashAfter := 0; crashAfter < total; crashAfter++ {
			t.Run(fmt.Sprintf("%s/crash after %d of %d writes", tc.name, crashAfter, total), func(t *testing.T) {
				w := newWorld(t, sc)
				prepare(w)
				w.failAfter.Store(int32(crashAfter))
				// Passes run until one meets the crash.
				for pass := 0; pass < 4 && w.lastErr == nil; pass++ {
					w.reconcile()
				}
				w.g.Expect(w.lastErr).To(MatchError(errCrash))
				w.g.Expect(int(w.writes.Load())).To(Equal(crashAfter))
				w.expectNoDanglingRefs()
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
				w.g.Expect(w.get(md, "Cluster", "mgmt").GetAnnotations()).NotTo(HaveKey(api.BlockMoveAnnotation), "no move block stays")
				w.g.Expect(w.condition().Status).To(Equal(metav1.ConditionTrue), w.condition().Message)
				if tc.approve {
					w.expectRolledOnce()
				}
			})
		}
	}
}
