package release

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"github.com/opencontainers/go-digest"
	helmv1 "helm.sh/helm/v4/pkg/release/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestRef(t *testing.T) {
	tests := []struct {
		name string   // case
		rel  *Release // release to name
		want string   // expected Ref
	}{
		{name: "plain", rel: &Release{Name: "cluster", Namespace: "capi", Version: 3}, want: "capi/cluster.v3"},
		{name: "dotted name", rel: &Release{Name: "a.b", Namespace: "ns", Version: 12}, want: "ns/a.b.v12"},
		{name: "zero", rel: &Release{}, want: "/.v0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(tt.rel.Ref()).To(Equal(tt.want))
		})
	}
}

func TestIsPending(t *testing.T) {
	tests := []struct {
		status string // helm status
		want   bool   // whether Helm is still writing the release
	}{
		{status: "pending-install", want: true},
		{status: "pending-upgrade", want: true},
		{status: "pending-rollback", want: true},
		{status: "deployed"},
		{status: "superseded"},
		{status: "failed"},
		{status: "uninstalling"},
		{status: "uninstalled"},
		{status: "unknown"},
		{status: ""},
	}
	for _, tt := range tests {
		t.Run(tt.status, func(t *testing.T) {
			NewWithT(t).Expect((&Release{Status: tt.status}).IsPending()).To(Equal(tt.want))
		})
	}
}

func TestSecretName(t *testing.T) {
	NewWithT(t).Expect(SecretName("cluster", 7)).To(Equal("sh.helm.release.v1.cluster.v7"))
}

// TestDecodeFixture checks the fields a decoded release carries.
func TestDecodeFixture(t *testing.T) {
	g := NewWithT(t)
	rel := decodeFixture(t, "full.json")
	g.Expect(rel.Name).To(Equal("cluster"))
	g.Expect(rel.Namespace).To(Equal("capi-system"))
	g.Expect(rel.Version).To(Equal(3))
	g.Expect(rel.Status).To(Equal("deployed"))
	g.Expect(rel.ApplyMethod).To(Equal("ssa"))
	g.Expect(rel.ChartName).To(Equal("cluster"))
	g.Expect(rel.ChartVersion).To(Equal("1.4.2"))
	objs, err := rel.Objects(0)
	g.Expect(err).NotTo(HaveOccurred())
	var kinds []string
	for _, o := range objs {
		kinds = append(kinds, o.GetKind())
	}
	g.Expect(kinds).To(ContainElement("Metal3MachineTemplate"))
	g.Expect(rel.IsPending()).To(BeFalse())
}

// TestDecodeErrors covers release data that decodes but cannot be the
// release its Secret names, and the manifest limit, without an API server.
func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name    string // case
		data    string // release JSON, encoded as Helm does
		max     int    // Reader's manifest limit
		wantErr error  // expected sentinel
	}{
		{name: "null", data: `null`, wantErr: ErrReleaseCorrupt},
		{name: "no info", data: `{"name":"r","version":1}`, wantErr: ErrReleaseCorrupt},
		{name: "other name", data: `{"name":"x","version":1,"info":{}}`, wantErr: ErrReleaseCorrupt},
		{name: "other version", data: `{"name":"r","version":2,"info":{}}`, wantErr: ErrReleaseCorrupt},
		{name: "null hook", data: `{"name":"r","version":1,"info":{},"hooks":[null]}`, wantErr: ErrReleaseCorrupt},
		{name: "bad time", data: `{"name":"r","version":1,"info":{"last_deployed":"yesterday"}}`, wantErr: ErrReleaseCorrupt},
		{name: "manifest over limit", data: `{"name":"r","version":1,"info":{},"manifest":"12345"}`, max: 4, wantErr: ErrManifestTooLarge},
		{name: "manifest at limit", data: `{"name":"r","version":1,"info":{},"manifest":"1234"}`, max: 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			src := fakeSource("r", 1, helmEncode(t, []byte(tt.data)))
			rel, err := NewReader(tt.max).Get(context.Background(), src, "ns", "r", 1)
			if tt.wantErr == nil {
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(rel.Manifest).To(Equal("1234"))
				return
			}
			g.Expect(err).To(MatchError(tt.wantErr))
			g.Expect(rel).To(BeNil())
		})
	}
}

// TestBoundSecretsIsReadOnly checks the client handed to Helm's driver
// refuses every write.
func TestBoundSecretsIsReadOnly(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	s := &boundSecrets{SecretInterface: &fakeSecrets{}, ctx: ctx}
	_, err := s.Create(ctx, &corev1.Secret{}, metav1.CreateOptions{})
	g.Expect(err).To(MatchError(errReadOnly))
	_, err = s.Update(ctx, &corev1.Secret{}, metav1.UpdateOptions{})
	g.Expect(err).To(MatchError(errReadOnly))
	g.Expect(s.Delete(ctx, "x", metav1.DeleteOptions{})).To(MatchError(errReadOnly))
	g.Expect(s.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})).To(MatchError(errReadOnly))
	_, err = s.Patch(ctx, "x", types.MergePatchType, nil, metav1.PatchOptions{})
	g.Expect(err).To(MatchError(errReadOnly))
	_, err = s.Apply(ctx, nil, metav1.ApplyOptions{})
	g.Expect(err).To(MatchError(errReadOnly))
}

// TestMemoEviction checks the memo stays within its bytes, evicts the least
// recently used entries first, and only serves the Secret version it
// decoded.
func TestMemoEviction(t *testing.T) {
	g := NewWithT(t)
	key := func(i int) memoKey { return memoKey{source: "s", namespace: "ns", name: fmt.Sprint(i)} }
	entry := func(i int, rv string, manifest int) *memoEntry {
		return &memoEntry{key: key(i), uid: "u", resourceVersion: rv, rel: &Release{Version: i, Manifest: strings.Repeat("x", manifest)}}
	}
	one := entry(1, "1", 10_000).cost()
	m := newMemo(2*one + one/2) // room for two entries of 10 KB
	m.put(entry(1, "1", 10_000))
	m.put(entry(2, "1", 10_000))
	_, ok := m.get(key(1), "u", "1") // 1 is now the most recently used
	g.Expect(ok).To(BeTrue())
	m.put(entry(3, "1", 10_000))
	n, bytes := m.size()
	g.Expect(n).To(Equal(2))
	g.Expect(bytes).To(Equal(2 * one))
	_, ok = m.get(key(2), "u", "1")
	g.Expect(ok).To(BeFalse(), "least recently used entry is evicted")
	_, ok = m.get(key(1), "u", "2")
	g.Expect(ok).To(BeFalse(), "another resourceVersion is a miss")
	_, ok = m.get(key(1), "other", "1")
	g.Expect(ok).To(BeFalse(), "another UID is a miss")
	m.put(entry(1, "2", 10_000))
	e, ok := m.get(key(1), "u", "2")
	g.Expect(ok).To(BeTrue())
	g.Expect(e.rel.Version).To(Equal(1))
	n, _ = m.size()
	g.Expect(n).To(Equal(2), "a new version replaces the old entry")

	m.put(entry(4, "1", 20_000))
	n, bytes = m.size()
	g.Expect(n).To(Equal(1), "a large entry evicts as many as it takes")
	g.Expect(bytes).To(Equal(entry(4, "1", 20_000).cost()))
	m.put(entry(4, "2", 30_000))
	n, bytes = m.size()
	g.Expect([]any{n, bytes}).To(Equal([]any{0, int64(0)}), "an entry larger than the bound is not kept, nor the version it replaces")

	m.put(&memoEntry{key: key(5), uid: "u", resourceVersion: "1", err: errors.New(strings.Repeat("e", 100))})
	m.put(entry(6, "1", 100))
	m.forget("s")
	n, bytes = m.size()
	g.Expect([]any{n, bytes}).To(Equal([]any{0, int64(0)}), "forget drops a source's entries, errors too")
}

// TestMemoCostCountsWhatIsKept: an entry's cost grows with the manifest it
// keeps, byte for byte, over a fixed overhead.
func TestMemoCostCountsWhatIsKept(t *testing.T) {
	g := NewWithT(t)
	small := (&memoEntry{rel: &Release{Manifest: "a"}}).cost()
	large := (&memoEntry{rel: &Release{Manifest: strings.Repeat("a", 1<<20)}}).cost()
	g.Expect(large - small).To(Equal(int64(1<<20 - 1)))
	g.Expect(small).To(BeNumerically(">=", memoEntryOverhead))
}

// TestMemoKeepsNoValuesOrHooks: a release with 2 MB of values and hook
// manifests costs the memo what its manifest costs: neither is kept (the
// digest needs only its sha256 state), so a tenant's large values cannot
// grow the memo past its bound, and the digest is still helm-controller's.
func TestMemoKeepsNoValuesOrHooks(t *testing.T) {
	g := NewWithT(t)
	big := strings.Repeat("v", 1<<20)
	rls := map[string]any{
		"name": "r", "version": 1, "namespace": "ns",
		"info":     map[string]any{"status": "deployed"},
		"chart":    map[string]any{"metadata": map[string]any{"name": "cluster", "version": "1.0.0"}},
		"config":   map[string]any{"blob": big},
		"manifest": "---\nkind: ConfigMap\n",
		"hooks":    []any{map[string]any{"name": "h", "kind": "Job", "manifest": big, "events": []string{"pre-install"}}},
	}
	data, err := json.Marshal(rls)
	g.Expect(err).NotTo(HaveOccurred())
	r := NewReader(0)
	rel, err := r.Get(context.Background(), fakeSource("r", 1, helmEncode(t, data)), "ns", "r", 1)
	g.Expect(err).NotTo(HaveOccurred())
	n, bytes := r.MemoSize()
	g.Expect(n).To(Equal(1))
	g.Expect(bytes).To(BeNumerically("<", 2*memoEntryOverhead), "values and hooks are not kept")

	var decoded helmv1.Release
	g.Expect(json.Unmarshal(data, &decoded)).To(Succeed())
	g.Expect(rel.Digest).To(Equal(upstreamDigest(t, &decoded, "", false)))
	g.Expect(rel.matchesDigest(digest.Digest(upstreamDigest(t, &decoded, ociDigest, false)), ociDigest)).To(BeTrue())
}
