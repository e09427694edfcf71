package controllers_test

import (
	"context"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/target"
)

// countingReader counts the reads that reach the API server.
type countingReader struct {
	client.Reader
	w *world
}

func (c countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	c.w.liveReads.Add(1)
	return c.Reader.Get(ctx, key, obj, opts...)
}

func (c countingReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	c.w.liveReads.Add(1)
	return c.Reader.List(ctx, list, opts...)
}

// recordingCache records the kinds and versions read from the informers.
type recordingCache struct {
	client.Reader
	w *world
}

func (c recordingCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	c.w.cachedKinds.Store(obj.GetObjectKind().GroupVersionKind(), true)
	return c.Reader.Get(ctx, key, obj, opts...)
}

func (c recordingCache) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	gvk := list.GetObjectKind().GroupVersionKind()
	gvk.Kind = strings.TrimSuffix(gvk.Kind, "List")
	c.w.cachedKinds.Store(gvk, true)
	return c.Reader.List(ctx, list, opts...)
}

// cachedVersions returns the versions each kind was read at from the
// informers.
func (w *world) cachedVersions() map[string][]string {
	out := map[string][]string{}
	w.cachedKinds.Range(func(k, _ any) bool {
		gvk := k.(schema.GroupVersionKind)
		out[gvk.GroupKind().String()] = append(out[gvk.GroupKind().String()], gvk.Version)
		return true
	})
	return out
}

// cachedReader builds the informers production reads the local cluster
// from (target.NewReadCache), for every kind this suite's worlds hold,
// with the release Secrets' metadata selected by owner=helm. Reads of
// anything else reach the API server and are counted.
func (w *world) cachedReader() *target.CachedReader {
	templates, err := manifest.ParseKinds(manifest.DefaultTemplateKinds)
	w.g.Expect(err).NotTo(HaveOccurred())
	c := w.informerCache(templates)
	w.informers = c
	ctx, cancel := context.WithCancel(context.Background())
	w.t.Cleanup(cancel)
	go func() { _ = c.Start(ctx) }()
	kinds := map[schema.GroupKind]bool{}
	for _, gk := range append(manifest.UserKinds(), manifest.ClusterKind,
		schema.GroupKind{Group: "infrastructure.cluster.x-k8s.io", Kind: "Metal3MachineTemplate"},
		schema.GroupKind{Group: "infrastructure.cluster.x-k8s.io", Kind: "Metal3DataTemplate"},
		schema.GroupKind{Group: "infrastructure.cluster.x-k8s.io", Kind: "LockedMachineTemplate"},
		schema.GroupKind{Group: "bootstrap.cluster.x-k8s.io", Kind: "KubeadmConfigTemplate"}) {
		kinds[gk] = true
	}
	return &target.CachedReader{Cache: recordingCache{Reader: c, w: w}, Live: countingReader{Reader: w.tgt.Client, w: w}, Kinds: kinds, SecretMetadata: true}
}

// informerCache is the informer cache of cachedReader: as the controller's,
// the Clusters, consumers and holders slimmed to what a pass reads of them.
func (w *world) informerCache(templates *manifest.KindMatcher) ctrlcache.Cache {
	secretMeta := &metav1.PartialObjectMetadata{}
	secretMeta.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: "Secret"})
	c, err := ctrlcache.New(w.tgt.Config, ctrlcache.Options{Scheme: w.tgt.Client.Scheme(), ByObject: map[client.Object]ctrlcache.ByObject{
		secretMeta: {Label: labels.SelectorFromSet(labels.Set{"owner": "helm"})},
	}, DefaultTransform: target.SlimTransform(templates.Match)})
	w.g.Expect(err).NotTo(HaveOccurred())
	return c
}

// settleSecondRotation upgrades the locked release to a new image, settles,
// and checks the end state of a second rotation away from the replacement
// first: every consumer on the new replacement, first cleaned up, nothing
// duplicated, the release in sync. It returns the new replacement's name.
func settleSecondRotation(w *world, first string) string {
	w.t.Helper()
	g := w.g
	w.storeAndRecord(2, "deployed", render(withImage(lockedRelease, v2Image)))
	w.settle()
	second := w.get(m3, "LockedMachineTemplate", "mgmt-cp").GetAnnotations()[api.SupersededByAnnotation]
	g.Expect(second).NotTo(Equal(first))
	for _, rp := range refPaths {
		g.Expect(str(w.get(rp.apiVersion, rp.kind, rp.name), rp.path...)).To(Equal(second))
	}
	w.expectGone(m3, "LockedMachineTemplate", first)
	g.Expect(w.list(m3, "LockedMachineTemplate")).To(HaveLen(2), "the original and the second replacement, no duplicate")
	g.Expect(w.condition().Status).To(Equal(metav1.ConditionTrue), w.condition().Message)
	return second
}

// settle runs passes until one writes nothing, as the workqueue would after
// the watch events of the pass's own writes, and returns the writes made.
func (w *world) settle() int {
	w.t.Helper()
	total := 0
	for pass := 0; pass < 8; pass++ {
		n := w.reconcile()
		if n == 0 && w.lastErr == nil {
			return total
		}
		total += n
	}
	w.t.Fatalf("no quiet pass after 8 passes (%d writes)", total)
	return total
}

// TestCachedReads runs the rotation, the second rotation, the clean-up and
// the steady state with the target read from informers, as production
// reads the local cluster. A read that lags the add-on's own writes costs a
// conflict and a rerun, never a wrong write: the same end state as the
// live-read worlds, no duplicate replacement, and a delete decided again
// from live reads before it is made. In the steady state a pass reads
// nothing from the API server.
func TestCachedReads(t *testing.T) {
	w := newWorld(t, scenario{annotations: enabled, live: lockedLive, release: lockedRelease, applyMethod: "csa", reads: throughInformers})
	g := w.g
	// A pass that loses a race to its own stale cache ends, lifting its move
	// block, and runs again: each run sets and lifts the block (2 writes to
	// the Cluster); the corrections are made once.
	var clusterWrites int
	w.afterWrite = func(o client.Object) {
		if o.GetObjectKind().GroupVersionKind().Kind == "Cluster" {
			clusterWrites++
		}
	}
	g.Expect(w.settle()-clusterWrites).To(Equal(8), "the worker Metal3MachineTemplate in place, the replacement, 5 control planes, the mark")
	g.Expect(clusterWrites).To(BeNumerically(">=", 2), "the move block and its lift")
	g.Expect(clusterWrites%2).To(BeZero(), "every move block lifted")
	g.Expect(w.get(md, "Cluster", "mgmt").GetAnnotations()).NotTo(HaveKey(api.BlockMoveAnnotation))
	w.afterWrite = nil
	first := expectRotated(w, m3, "LockedMachineTemplate", "mgmt-cp").GetName()
	for _, rp := range refPaths {
		g.Expect(str(w.get(rp.apiVersion, rp.kind, rp.name), rp.path...)).To(Equal(first))
	}

	settleSecondRotation(w, first)

	w.liveReads.Store(0)
	before := w.versions()
	for pass := 0; pass < 3; pass++ {
		g.Expect(w.reconcile()).To(Equal(0))
	}
	g.Expect(w.versions()).To(Equal(before))
	g.Expect(w.liveReads.Load()).To(BeZero(), "a steady-state pass reads from the informers only")
	g.Expect(w.cachedVersions()).To(HaveKeyWithValue("Metal3MachineTemplate.infrastructure.cluster.x-k8s.io", []string{"v1beta1"}),
		"listed as a user of the data templates at the release's version, not the preferred v1beta2")
}
