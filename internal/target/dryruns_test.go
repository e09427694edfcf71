package target

import (
	"context"
	"errors"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// answering is a client that answers every request with err, and a dry-run
// with the object it was given, a field set; it counts the requests.
type answering struct {
	client.Client
	err   error
	calls int
}

func (a *answering) answer(obj client.Object) error {
	a.calls++
	if a.err == nil {
		u := obj.(*unstructured.Unstructured)
		_ = unstructured.SetNestedField(u.Object, "server", "status", "answeredBy")
	}
	return a.err
}

func (a *answering) Patch(_ context.Context, obj client.Object, _ client.Patch, _ ...client.PatchOption) error {
	return a.answer(obj)
}

func (a *answering) Create(_ context.Context, obj client.Object, _ ...client.CreateOption) error {
	return a.answer(obj)
}

func (a *answering) Delete(_ context.Context, obj client.Object, _ ...client.DeleteOption) error {
	return a.answer(obj)
}

func memoObject(name, rv string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "Metal3DataTemplate",
		"metadata": map[string]any{"name": name, "namespace": "ns", "uid": "u1", "resourceVersion": rv},
		"spec":     map[string]any{"clusterName": "bootstrap"},
	}}
	return u
}

var (
	dryPatch = client.RawPatch(types.JSONPatchType, []byte(`[{"op":"replace","path":"/spec/clusterName","value":"mgmt"}]`))
	locked   = apierrors.NewInvalid(schema.GroupKind{Group: "infrastructure.cluster.x-k8s.io", Kind: "Metal3DataTemplate"}, "md0", nil)
	refused  = apierrors.NewForbidden(schema.GroupResource{Resource: "metal3datatemplates"}, "md0", errors.New("denied by a webhook"))
	failed   = apierrors.NewInternalError(errors.New("etcd is away"))
)

// TestDryRunMemo: which answers are remembered, for which requests, and
// what forgets them.
func TestDryRunMemo(t *testing.T) {
	ctx := context.Background()
	patch := func(c client.Client, rv string) error {
		return c.Patch(ctx, memoObject("md0", rv), dryPatch, client.DryRunAll)
	}
	create := func(c client.Client, spec string) error {
		u := memoObject("md0-tdc-probe", "")
		u.Object["spec"] = map[string]any{"clusterName": spec}
		return c.Create(ctx, u, client.DryRunAll)
	}
	tests := []struct {
		name string
		// err is the server's answer; run asks through c and writes
		// through w; calls is how many requests reached the server.
		err   error
		run   func(c, w client.Client)
		calls int
	}{
		{name: "an accepted patch, asked twice, is sent once", run: func(c, _ client.Client) { _ = patch(c, "7"); _ = patch(c, "7") }, calls: 1},
		{name: "a locked patch (invalid) is remembered", err: locked, run: func(c, _ client.Client) { _ = patch(c, "7"); _ = patch(c, "7") }, calls: 1},
		{name: "a refused patch is asked again", err: refused, run: func(c, _ client.Client) { _ = patch(c, "7"); _ = patch(c, "7") }, calls: 2},
		{name: "a failure to answer is asked again", err: failed, run: func(c, _ client.Client) { _ = patch(c, "7"); _ = patch(c, "7") }, calls: 2},
		{name: "another resourceVersion is another request", run: func(c, _ client.Client) { _ = patch(c, "7"); _ = patch(c, "8"); _ = patch(c, "7") }, calls: 3},
		{name: "a create's view is remembered by content", run: func(c, _ client.Client) { _ = create(c, "mgmt"); _ = create(c, "mgmt"); _ = create(c, "other") }, calls: 2},
		{name: "a create's refusal is remembered", err: refused, run: func(c, _ client.Client) { _ = create(c, "mgmt"); _ = create(c, "mgmt") }, calls: 1},
		{name: "a write that is not a dry-run is never answered from memory", run: func(c, _ client.Client) {
			_ = patch(c, "7")
			_ = c.Patch(ctx, memoObject("md0", "7"), dryPatch)
		}, calls: 2},
		{name: "a failed write forgets its namespace's answers", err: locked, run: func(c, w client.Client) {
			_ = patch(c, "7")
			_ = create(c, "mgmt")
			_ = w.Delete(ctx, memoObject("other", "3"))
			_ = patch(c, "7")
			_ = create(c, "mgmt")
		}, calls: 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			server := &answering{err: tt.err}
			memo := &DryRunMemo{}
			tt.run(memo.DryRuns(server, "local"), memo.Writes(server, "local"))
			NewWithT(t).Expect(server.calls).To(Equal(tt.calls))
		})
	}
}

// TestDryRunMemoAnswers: a remembered answer is the server's object, a
// copy each time; an object's answers go when a write to it succeeds, every
// answer past the TTL, with Reset, and a target's with ForgetTarget.
func TestDryRunMemoAnswers(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	now := time.Unix(1000, 0)
	memo := &DryRunMemo{TTL: time.Minute, Now: func() time.Time { return now }}
	server := &answering{}
	c, w := memo.DryRuns(server, "local"), memo.Writes(server, "local")

	first := memoObject("md0", "7")
	g.Expect(c.Patch(ctx, first, dryPatch, client.DryRunAll)).To(Succeed())
	again := memoObject("md0", "7")
	g.Expect(c.Patch(ctx, again, dryPatch, client.DryRunAll)).To(Succeed())
	g.Expect(server.calls).To(Equal(1))
	g.Expect(memo.Hits()).To(Equal(uint64(1)))
	g.Expect(again.Object).To(Equal(first.Object), "the server's answer")
	again.Object["status"] = "changed"
	third := memoObject("md0", "7")
	g.Expect(c.Patch(ctx, third, dryPatch, client.DryRunAll)).To(Succeed())
	g.Expect(third.Object["status"]).To(Equal(map[string]any{"answeredBy": "server"}), "a copy each time")

	g.Expect(w.Patch(ctx, memoObject("md0", "7"), dryPatch)).To(Succeed())
	g.Expect(memo.Len()).To(BeZero(), "written: its answer was about a resourceVersion it no longer has")

	g.Expect(c.Patch(ctx, memoObject("md0", "8"), dryPatch, client.DryRunAll)).To(Succeed())
	now = now.Add(time.Minute)
	calls := server.calls
	g.Expect(c.Patch(ctx, memoObject("md0", "8"), dryPatch, client.DryRunAll)).To(Succeed())
	g.Expect(server.calls).To(Equal(calls+1), "past the TTL: asked again")

	remote := memo.DryRuns(server, "remote:a")
	g.Expect(remote.Patch(ctx, memoObject("md0", "8"), dryPatch, client.DryRunAll)).To(Succeed())
	g.Expect(memo.Len()).To(Equal(2), "one answer per target")
	memo.ForgetTarget("remote:a")
	g.Expect(memo.Len()).To(Equal(1))
	memo.Reset()
	g.Expect(memo.Len()).To(BeZero())

	var none *DryRunMemo
	g.Expect(none.DryRuns(server, "local")).To(BeIdenticalTo(client.Client(server)), "no memo: the client itself")
	g.Expect(none.Writes(server, "local")).To(BeIdenticalTo(client.Client(server)))
}
