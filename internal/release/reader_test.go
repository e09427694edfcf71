package release_test

import (
	"context"
	"encoding/base64"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/release/common"
	helmv1 "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage"
	"helm.sh/helm/v4/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/release"
)

// testManifest is a release manifest like the cluster chart renders.
const testManifest = `---
# release.Source: cluster/templates/m3mt.yaml
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: Metal3MachineTemplate
metadata:
  name: workers
  namespace: capi
spec:
  template:
    spec:
      image:
        url: http://172.18.0.2:6180/ubuntu.qcow2
`

// helmRelease builds a release the way helm-controller has Helm write one:
// chart metadata, info with deploy times, values, manifest, hooks, method.
func helmRelease(name string, version int, status common.Status, method string) *helmv1.Release {
	now := time.Now()
	return &helmv1.Release{
		Name:      name,
		Namespace: "capi",
		Version:   version,
		Info: &helmv1.Info{
			Status:        status,
			FirstDeployed: now.Add(-time.Hour),
			LastDeployed:  now,
			Description:   "Upgrade complete",
		},
		Chart: &chart.Chart{Metadata: &chart.Metadata{
			APIVersion: "v2", Name: "cluster", Version: "1.2." + strconv.Itoa(version), AppVersion: "v1.14.0",
		}},
		Config:      map[string]any{"image": map[string]any{"url": "http://172.18.0.2:6180/ubuntu.qcow2"}, "replicas": 3},
		Manifest:    testManifest,
		Hooks:       []*helmv1.Hook{{Name: "t", Kind: "Pod", Events: []helmv1.HookEvent{helmv1.HookTest}}},
		ApplyMethod: method,
	}
}

// helmStorage is Helm's storage on the Secrets driver, as helm-controller
// writes releases.
func helmStorage(cs *kubernetes.Clientset, ns string) *storage.Storage {
	return storage.Init(driver.NewSecrets(cs.CoreV1().Secrets(ns)))
}

func TestGetRoundTrip(t *testing.T) {
	env, cs := clusterEnv(t)
	ns := newNamespace(t, cs)
	src := release.Source{Secrets: cs.CoreV1(), Meta: env.Client, Key: "local"}
	tests := []struct {
		name   string        // release name
		method string        // apply method Helm recorded
		status common.Status // release status
		zone   *time.Location
	}{
		{name: "ssa", method: "ssa", status: common.StatusDeployed, zone: time.Local},
		{name: "csa", method: "csa", status: common.StatusFailed, zone: time.FixedZone("CEST", 2*3600)},
		{name: "helm3", method: "", status: common.StatusPendingUpgrade, zone: time.UTC},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			want := helmRelease(tt.name, 1, tt.status, tt.method)
			want.Info.FirstDeployed = want.Info.FirstDeployed.In(tt.zone)
			want.Info.LastDeployed = want.Info.LastDeployed.In(tt.zone)
			g.Expect(helmStorage(cs, ns).Create(want)).To(Succeed())
			// What helm-controller's storage observer digests: the release
			// in memory, as written (monotonic clock, local zone, int values).
			observed := release.UpstreamDigest(t, want, "", false)

			got, err := release.NewReader(1<<20).Get(t.Context(), src, ns, tt.name, 1)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got.Name).To(Equal(tt.name))
			g.Expect(got.Namespace).To(Equal("capi"))
			g.Expect(got.Version).To(Equal(1))
			g.Expect(got.Status).To(Equal(string(tt.status)))
			g.Expect(got.IsPending()).To(Equal(tt.status == common.StatusPendingUpgrade))
			g.Expect(got.ApplyMethod).To(Equal(tt.method))
			expectTestManifest(g, got)
			g.Expect(got.ChartName).To(Equal("cluster"))
			g.Expect(got.ChartVersion).To(Equal("1.2.1"))
			g.Expect(got.Ref()).To(Equal("capi/" + tt.name + ".v1"))
			g.Expect(got.Digest).To(Equal(observed))
		})
	}
}

func TestGetMemo(t *testing.T) {
	g := NewWithT(t)
	env, cs := clusterEnv(t)
	ns := newNamespace(t, cs)
	src := release.Source{Secrets: cs.CoreV1(), Meta: env.Client, Key: "local"}
	st := helmStorage(cs, ns)
	rls := helmRelease("app", 1, common.StatusPendingInstall, "ssa")
	g.Expect(st.Create(rls)).To(Succeed())
	r := release.NewReader(1 << 20)

	first, err := r.Get(t.Context(), src, ns, "app", 1)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(release.DecodeCount(r)).To(BeEquivalentTo(1))
	first.Prepared = "changed by the caller"

	second, err := r.Get(t.Context(), src, ns, "app", 1)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(release.DecodeCount(r)).To(BeEquivalentTo(1), "an unchanged Secret is not decoded again")
	expectTestManifest(g, second) // callers get copies
	g.Expect(second.Status).To(Equal("pending-install"))

	rls.Info.Status = common.StatusDeployed
	g.Expect(st.Update(rls)).To(Succeed())
	third, err := r.Get(t.Context(), src, ns, "app", 1)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(release.DecodeCount(r)).To(BeEquivalentTo(2), "a changed Secret is decoded again")
	g.Expect(third.Status).To(Equal("deployed"))
	g.Expect(third.Digest).NotTo(Equal(second.Digest))

	_, err = r.Get(t.Context(), release.Source{Secrets: cs.CoreV1(), Key: "local"}, ns, "app", 1)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(release.DecodeCount(r)).To(BeEquivalentTo(3), "without Meta every Get decodes")
}

// TestGetConcurrent reads the same releases from many goroutines; run with
// -race to check the memo.
func TestGetConcurrent(t *testing.T) {
	g := NewWithT(t)
	env, cs := clusterEnv(t)
	ns := newNamespace(t, cs)
	src := release.Source{Secrets: cs.CoreV1(), Meta: env.Client, Key: "local"}
	for v := 1; v <= 3; v++ {
		g.Expect(helmStorage(cs, ns).Create(helmRelease("app", v, common.StatusSuperseded, "ssa"))).To(Succeed())
	}
	r := release.NewReader(1 << 20)
	var wg sync.WaitGroup
	errs := make(chan error, 24)
	for i := range 24 {
		wg.Go(func() {
			rel, err := r.Get(t.Context(), src, ns, "app", i%3+1)
			if err == nil && rel.Version != i%3+1 {
				err = release.ErrHistoryMismatch
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		g.Expect(err).NotTo(HaveOccurred())
	}
	g.Expect(release.DecodeCount(r)).To(BeNumerically("<=", 24))
	g.Expect(release.MemoLen(r)).To(Equal(3))
}

func TestGetNotFound(t *testing.T) {
	env, cs := clusterEnv(t)
	ns := newNamespace(t, cs)
	tests := []struct {
		name string         // case
		src  release.Source // how the Reader reaches the cluster
	}{
		{name: "metadata read", src: release.Source{Secrets: cs.CoreV1(), Meta: env.Client, Key: "local"}},
		{name: "helm driver", src: release.Source{Secrets: cs.CoreV1(), Key: "local"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			rel, err := release.NewReader(0).Get(t.Context(), tt.src, ns, "missing", 1)
			g.Expect(rel).To(BeNil())
			g.Expect(err).To(MatchError(release.ErrReleaseNotFound))
			g.Expect(err).NotTo(MatchError(release.ErrReleaseCorrupt))
			g.Expect(err.Error()).To(HavePrefix("failed to get release Secret"))
		})
	}
}

// writeReleaseSecret writes a release Secret directly, with Helm's name,
// type and labels, and data.release set to data.
func writeReleaseSecret(t *testing.T, cs *kubernetes.Clientset, ns, name string, version int, data []byte) {
	t.Helper()
	_, err := cs.CoreV1().Secrets(ns).Create(context.Background(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: release.SecretName(name, version), Labels: map[string]string{
			"owner": "helm", "name": name, "status": "deployed", "version": strconv.Itoa(version),
		}},
		Type: "helm.sh/release.v1",
		Data: map[string][]byte{"release": data},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("failed to write release Secret: %v", err)
	}
}

func TestGetCorrupt(t *testing.T) {
	env, cs := clusterEnv(t)
	ns := newNamespace(t, cs)
	src := release.Source{Secrets: cs.CoreV1(), Meta: env.Client, Key: "local"}
	b64 := func(s string) []byte { return []byte(base64.StdEncoding.EncodeToString([]byte(s))) }
	tests := []struct {
		name string // release name, and the case
		data []byte // data.release
	}{
		{name: "bad-base64", data: []byte("not base64!")},
		{name: "not-gzip-not-json", data: b64("\x00\x01 neither gzip nor JSON")},
		{name: "gzip-bad-json", data: release.HelmEncode(t, []byte(`{"name": "gzip-bad-json", "version": `))},
		{name: "truncated-gzip", data: b64(string(mustB64Decode(t, release.HelmEncode(t, []byte(`{"name":"x"}`)))[:12]))},
		{name: "empty", data: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			writeReleaseSecret(t, cs, ns, tt.name, 1, tt.data)
			r := release.NewReader(0)
			for range 2 {
				rel, err := r.Get(t.Context(), src, ns, tt.name, 1)
				g.Expect(rel).To(BeNil())
				g.Expect(err).To(MatchError(release.ErrReleaseCorrupt))
				g.Expect(err).NotTo(MatchError(release.ErrReleaseNotFound))
			}
			g.Expect(release.DecodeCount(r)).To(BeEquivalentTo(1), "a corrupt Secret is not decoded again until it changes")
		})
	}
}

func mustB64Decode(t *testing.T, data []byte) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(string(data))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestGetManifestTooLarge(t *testing.T) {
	g := NewWithT(t)
	env, cs := clusterEnv(t)
	ns := newNamespace(t, cs)
	src := release.Source{Secrets: cs.CoreV1(), Meta: env.Client, Key: "local"}
	rls := helmRelease("big", 1, common.StatusDeployed, "ssa")
	rls.Manifest = strings.Repeat("x", 4097)
	g.Expect(helmStorage(cs, ns).Create(rls)).To(Succeed())

	_, err := release.NewReader(4096).Get(t.Context(), src, ns, "big", 1)
	g.Expect(err).To(MatchError(release.ErrManifestTooLarge))
	g.Expect(err).NotTo(MatchError(release.ErrReleaseCorrupt))
	rel, err := release.NewReader(4097).Get(t.Context(), src, ns, "big", 1)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(rel.Manifest).To(HaveLen(4097))
}

func TestPreviousDeployed(t *testing.T) {
	env, cs := clusterEnv(t)
	ns := newNamespace(t, cs)
	src := release.Source{Secrets: cs.CoreV1(), Meta: env.Client, Key: "local"}
	st := helmStorage(cs, ns)
	for _, rls := range []*helmv1.Release{
		helmRelease("app", 1, common.StatusSuperseded, "csa"),
		helmRelease("app", 2, common.StatusSuperseded, "ssa"),
		helmRelease("app", 3, common.StatusFailed, "ssa"),
		helmRelease("app", 4, common.StatusPendingUpgrade, "ssa"),
		// Another release whose name starts the same must not count.
		helmRelease("app-2", 3, common.StatusDeployed, "ssa"),
		helmRelease("lone", 1, common.StatusDeployed, "ssa"),
	} {
		if err := st.Create(rls); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name    string // release name
		before  int    // versions at or above this are ignored
		want    int    // version expected; 0 means (nil, nil)
		decodes int64  // release Secrets decoded to answer
	}{
		{name: "app", before: 4, want: 2, decodes: 1},
		{name: "app", before: 3, want: 2, decodes: 1},
		{name: "app", before: 5, want: 2, decodes: 1},
		{name: "app", before: 2, want: 1, decodes: 1},
		{name: "app", before: 1},
		{name: "lone", before: 1},
		{name: "missing", before: 9},
	}
	for _, tt := range tests {
		t.Run(tt.name+"/before="+strconv.Itoa(tt.before), func(t *testing.T) {
			g := NewWithT(t)
			r := release.NewReader(0)
			rel, err := r.PreviousDeployed(t.Context(), src, ns, tt.name, tt.before)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(release.DecodeCount(r)).To(Equal(tt.decodes))
			if tt.want == 0 {
				g.Expect(rel).To(BeNil())
				return
			}
			g.Expect(rel.Version).To(Equal(tt.want))
			g.Expect(rel.Status).To(Equal("superseded"))
		})
	}
}

// TestPreviousDeployedPruned checks a candidate pruned between the list and
// the read falls back to the next older one.
func TestPreviousDeployedPruned(t *testing.T) {
	g := NewWithT(t)
	env, cs := clusterEnv(t)
	ns := newNamespace(t, cs)
	src := release.Source{Secrets: cs.CoreV1(), Meta: env.Client, Key: "local"}
	st := helmStorage(cs, ns)
	g.Expect(st.Create(helmRelease("app", 1, common.StatusSuperseded, "ssa"))).To(Succeed())
	g.Expect(st.Create(helmRelease("app", 2, common.StatusDeployed, "ssa"))).To(Succeed())
	meta := &pruningReader{Reader: env.Client, prune: func() {
		g.Expect(cs.CoreV1().Secrets(ns).Delete(context.Background(), release.SecretName("app", 2), metav1.DeleteOptions{})).To(Succeed())
	}}
	rel, err := release.NewReader(0).PreviousDeployed(t.Context(), release.Source{Secrets: src.Secrets, Meta: meta, Key: "local"}, ns, "app", 3)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(rel.Version).To(Equal(1))
}

// pruningReader runs prune after the first List, to simulate Helm pruning
// history between PreviousDeployed's list and its read.
type pruningReader struct {
	client.Reader
	prune func()
	once  sync.Once
}

func (p *pruningReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	err := p.Reader.List(ctx, list, opts...)
	p.once.Do(p.prune)
	return err
}

// metaCounter counts the metadata reads a Reader makes through it.
type metaCounter struct {
	client.Reader
	gets, lists int
}

func (m *metaCounter) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	m.gets++
	return m.Reader.Get(ctx, key, obj, opts...)
}

func (m *metaCounter) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	m.lists++
	return m.Reader.List(ctx, list, opts...)
}

// TestGetIn: a pass that has listed storage reads a memoized release with
// no further request; a Secret changed since it was memoized is decoded
// again, and a version the listing lacks is read as Get reads it.
func TestGetIn(t *testing.T) {
	g := NewWithT(t)
	env, cs := clusterEnv(t)
	ns := newNamespace(t, cs)
	meta := &metaCounter{Reader: env.Client}
	src := release.Source{Secrets: cs.CoreV1(), Meta: meta, Key: "local"}
	st := helmStorage(cs, ns)
	rls := helmRelease("app", 1, common.StatusDeployed, "ssa")
	g.Expect(st.Create(rls)).To(Succeed())
	r := release.NewReader(1 << 20)

	stored, err := r.Stored(t.Context(), src, ns, "app")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(stored).To(HaveLen(1))
	g.Expect(stored[0].UID).NotTo(BeEmpty())
	_, err = r.GetIn(t.Context(), src, ns, "app", 1, stored)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(release.DecodeCount(r)).To(BeEquivalentTo(1))

	meta.gets, meta.lists = 0, 0
	got, err := r.GetIn(t.Context(), src, ns, "app", 1, stored)
	g.Expect(err).NotTo(HaveOccurred())
	expectTestManifest(g, got)
	g.Expect(meta.gets).To(BeZero(), "the memo is looked up with the listed metadata")
	g.Expect(release.DecodeCount(r)).To(BeEquivalentTo(1))

	rls.Info.Status = common.StatusSuperseded
	g.Expect(st.Update(rls)).To(Succeed())
	stored, err = r.Stored(t.Context(), src, ns, "app")
	g.Expect(err).NotTo(HaveOccurred())
	got, err = r.GetIn(t.Context(), src, ns, "app", 1, stored)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got.Status).To(Equal("superseded"))
	g.Expect(release.DecodeCount(r)).To(BeEquivalentTo(2), "a Secret changed since the memo is decoded again")

	meta.gets = 0
	g.Expect(st.Create(helmRelease("app", 2, common.StatusDeployed, "ssa"))).To(Succeed())
	got, err = r.GetIn(t.Context(), src, ns, "app", 2, stored)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got.Version).To(Equal(2))
	g.Expect(meta.gets).To(Equal(1), "a version the listing lacks is read as Get reads it")
}

// expectTestManifest checks that rel holds testManifest, prepared: its
// objects are what splitting testManifest gives, and a caller that reads
// them does not parse YAML again.
func expectTestManifest(g Gomega, rel *release.Release) {
	g.ExpectWithOffset(1, rel.Prepared).NotTo(BeEmpty(), "the manifest is prepared")
	g.ExpectWithOffset(1, rel.Manifest).To(BeEmpty(), "only the prepared form is kept")
	want, err := manifest.Split(testManifest, rel.Namespace, 0)
	g.ExpectWithOffset(1, err).NotTo(HaveOccurred())
	got, err := rel.Objects(0)
	g.ExpectWithOffset(1, err).NotTo(HaveOccurred())
	g.ExpectWithOffset(1, got).To(Equal(want))
}
