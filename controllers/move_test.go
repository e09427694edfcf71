package controllers_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/apply"
	"github.com/templatedrift/template-drift-controller/internal/testenv"
	"github.com/templatedrift/template-drift-controller/internal/testenv/move"
)

// TestMoveWaitsForACorrection runs the real `clusterctl move` while a
// rotation is held between two of its writes: the locked data templates'
// replacements are made and one machine template names its replacement,
// the other not yet. clusterctl pauses the Cluster, then must wait for the
// add-on's move block; the pass is let go only after the pause, goes on (a
// pass that started before the pause finishes its correction, as
// clusterctl expects of a controller that cannot pause at once) and lifts
// the move block; the move then copies a namespace with the rotation
// whole. The moved namespace has no dangling reference, no half-done
// rotation and no move block.
func TestMoveWaitsForACorrection(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	target, err := testenv.StartWith("move-target", testenv.Options{ProviderCRDs: true})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { g.Expect(target.Stop()).To(Succeed()) }()
	g.Expect(move.InstallProviders(ctx, env.Client)).To(Succeed())
	g.Expect(move.InstallProviders(ctx, target.Client)).To(Succeed())

	live, release := metaLive, metaRelease
	live.Metal3Cluster, release.Metal3Cluster = true, true
	w := newWorld(t, scenario{annotations: withStrategy("auto"), live: live, release: release, applyMethod: "csa"})
	g.Expect(move.PlayProvisioning(ctx, env.Client, w.ns, "mgmt")).To(Succeed())

	// Hold the pass after its first machine template write: the data
	// templates' replacements exist, one machine template names its one.
	held, letGo := make(chan struct{}), make(chan struct{})
	var once sync.Once
	w.afterWrite = func(o client.Object) {
		if o.GetObjectKind().GroupVersionKind().Kind == "Metal3MachineTemplate" {
			once.Do(func() { close(held); <-letGo })
		}
	}
	passDone := make(chan error, 1)
	go func() { passDone <- passRetryingConflicts(ctx, w) }()
	select {
	case <-held:
	case err := <-passDone:
		t.Fatalf("the pass ended before its first machine template write: %v", err)
	case <-time.After(time.Minute):
		t.Fatal("the pass did not reach its first machine template write")
	}
	g.Expect(w.get("cluster.x-k8s.io/v1beta2", "Cluster", "mgmt").GetAnnotations()).To(
		HaveKeyWithValue(api.BlockMoveAnnotation, api.ControllerName), "the Cluster is blocked while the pass writes")

	moveDone := make(chan error, 1)
	go func() {
		moveDone <- move.RunProvisioned(ctx, env.Client, env.KubeConfigPath, target.KubeConfigPath, w.ns)
	}()
	// clusterctl pauses the Cluster first; give it time to copy, which it
	// would do now without the move block.
	g.Eventually(func() bool {
		select {
		case err := <-moveDone:
			StopTrying(fmt.Sprintf("the move ended before it paused the Cluster (error: %v)", err)).Now()
		default:
		}
		paused, _, _ := unstructured.NestedBool(w.get("cluster.x-k8s.io/v1beta2", "Cluster", "mgmt").Object, "spec", "paused")
		return paused
	}, time.Minute, 100*time.Millisecond).Should(BeTrue(), "clusterctl pauses the Cluster")
	time.Sleep(3 * time.Second)
	g.Expect(moveDone).NotTo(Receive(), "the move waits for the move block")
	close(letGo)
	g.Expect(<-passDone).To(Succeed(), "the pass started before the pause finishes its correction")
	g.Eventually(moveDone, 2*time.Minute).Should(Receive(BeNil()), "the move goes on once the move block is lifted")

	moved := &world{t: t, g: g, ctx: ctx, ns: w.ns, tgt: target}
	g.Expect(moved.get("cluster.x-k8s.io/v1beta2", "Cluster", "mgmt").GetAnnotations()).NotTo(HaveKey(api.BlockMoveAnnotation))
	for _, name := range []string{"mgmt-md0", "mgmt-cp"} {
		m3mt := moved.get(m3, "Metal3MachineTemplate", name)
		dt, _, _ := unstructured.NestedString(m3mt.Object, "spec", "template", "spec", "dataTemplate", "name")
		g.Expect(dt).To(HavePrefix(name+"-metadata-"), "Metal3MachineTemplate %s names its data template's replacement", name)
		g.Expect(moved.get(m3, "Metal3DataTemplate", dt).GetAnnotations()).To(HaveKeyWithValue(api.ReplacesAnnotation, name+"-metadata"))
		g.Expect(moved.get(m3, "Metal3DataTemplate", name+"-metadata").GetAnnotations()).To(
			HaveKeyWithValue(api.SupersededByAnnotation, dt), "the original is marked: the rotation is whole")
	}
	moved.expectNoDanglingRefs()
}

// passRetryingConflicts runs one pass of w, again after a lost write race
// (as the workqueue would), and returns its error. It makes no assertion:
// it runs beside the test's goroutine.
func passRetryingConflicts(ctx context.Context, w *world) error {
	var err error
	for range 5 {
		_, err = w.r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(w.hr)})
		if !errors.Is(err, apply.ErrConflict) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
	return err
}
