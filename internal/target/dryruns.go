package target

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/internal/plan"
)

// DefaultDryRunTTL bounds how long a remembered answer is used. Within it,
// only an admission webhook's configuration changing could change the
// server's answer to the same request on the same object, and that is rare
// enough to be found an hour later.
const DefaultDryRunTTL = time.Hour

// DryRunMemo remembers the server's answers to the dry-runs that confirm a
// template's drift (Target.DryRuns). A template whose drift the server
// keeps confirming, e.g. a locked template left drifted behind its
// replacement, or one whose raw diff is only the API version conversion,
// would otherwise cost one or two dry-run requests on every pass of its
// release, for the same answer.
//
// An answer is used again only for the same request: the same target and
// object, the same patch on the same resourceVersion of it (a dry-run
// patch), or the same object (a dry-run create, which the pass makes under
// a probe name that never exists); and only within the TTL. Only the
// server's lasting answers about the object are remembered (plan's rules:
// accepted or locked in place, a view or a refusal of a create); a failure
// to answer is asked again. A namespace's answers are forgotten when a
// write there fails, so that a write the server refuses after a remembered
// "accepted" is asked about again instead of retried on a stale answer
// (and an object's, when a write to it succeeds); every answer is forgotten when the cluster's CustomResourceDefinitions
// change (Reset), as a new schema changes what the server stores.
//
// It is safe for concurrent use.
type DryRunMemo struct {
	// TTL is DefaultDryRunTTL when zero.
	TTL time.Duration
	// Now is time.Now when nil (tests set it).
	Now func() time.Time

	mu      sync.Mutex
	entries map[dryRunSlot]dryRunAnswer
	swept   time.Time
	hits    uint64
}

// dryRunSlot is where one object's answer to one kind of dry-run is kept:
// a newer request replaces the older.
type dryRunSlot struct {
	target, namespace, name, kind, verb string
}

// dryRunAnswer is one remembered answer: the object the server returned,
// or its refusal.
type dryRunAnswer struct {
	request string
	at      time.Time
	object  map[string]any
	err     error
}

// DryRuns returns c, whose dry-run patches and creates of unstructured
// objects are answered from the memo when asked before for target key; it
// is c itself for a nil memo.
func (m *DryRunMemo) DryRuns(c client.Client, key string) client.Client {
	if m == nil {
		return c
	}
	return &memoClient{Client: c, memo: m, key: key}
}

// Writes returns c, whose failed writes forget the answers of their
// namespace for target key; it is c itself for a nil memo.
func (m *DryRunMemo) Writes(c client.Client, key string) client.Client {
	if m == nil {
		return c
	}
	return &forgettingClient{Client: c, memo: m, key: key}
}

// memoClient answers dry-runs from the memo.
type memoClient struct {
	client.Client
	memo *DryRunMemo
	key  string
}

func (c *memoClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	o := &client.PatchOptions{}
	o.ApplyOptions(opts)
	u, ok := obj.(*unstructured.Unstructured)
	if len(o.DryRun) == 0 || !ok {
		return c.Client.Patch(ctx, obj, patch, opts...)
	}
	data, err := patch.Data(obj)
	if err != nil {
		return c.Client.Patch(ctx, obj, patch, opts...)
	}
	request := fingerprint(string(u.GetUID()), u.GetResourceVersion(), string(patch.Type()), string(data))
	return c.memo.answer(c.slot(u, "patch"), request, u, func() error { return c.Client.Patch(ctx, obj, patch, opts...) },
		func(err error) bool {
			answer, retry := plan.InPlaceDryRun(err)
			return !retry && answer.Lasting()
		})
}

func (c *memoClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	o := &client.CreateOptions{}
	o.ApplyOptions(opts)
	u, ok := obj.(*unstructured.Unstructured)
	if len(o.DryRun) == 0 || !ok {
		return c.Client.Create(ctx, obj, opts...)
	}
	body, err := json.Marshal(u.Object)
	if err != nil {
		return c.Client.Create(ctx, obj, opts...)
	}
	return c.memo.answer(c.slot(u, "create"), fingerprint(string(body)), u, func() error { return c.Client.Create(ctx, obj, opts...) },
		func(err error) bool {
			_, retry := plan.UnconfirmedDrift(err)
			return err == nil || !retry
		})
}

func (c *memoClient) slot(u *unstructured.Unstructured, verb string) dryRunSlot {
	return dryRunSlot{target: c.key, namespace: u.GetNamespace(), name: u.GetName(), kind: u.GroupVersionKind().String(), verb: verb}
}

// answer sets u to the remembered answer to request in slot, or asks the
// server (ask) and remembers its answer when lasting says it lasts.
func (m *DryRunMemo) answer(slot dryRunSlot, request string, u *unstructured.Unstructured, ask func() error, lasting func(error) bool) error {
	if a, ok := m.get(slot, request); ok {
		if a.err == nil {
			u.Object = deepCopy(a.object)
		}
		return a.err
	}
	err := ask()
	if lasting(err) {
		a := dryRunAnswer{request: request, err: err}
		if err == nil {
			a.object = deepCopy(u.Object)
		}
		m.put(slot, a)
	}
	return err
}

func deepCopy(o map[string]any) map[string]any {
	return (&unstructured.Unstructured{Object: o}).DeepCopy().Object
}

// fingerprint hashes the parts of a request.
func fingerprint(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		_, _ = h.Write([]byte(p))
		_, _ = h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// forgettingClient forgets a namespace's answers when a write there fails.
type forgettingClient struct {
	client.Client
	memo *DryRunMemo
	key  string
}

func (c *forgettingClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	o := &client.CreateOptions{}
	o.ApplyOptions(opts)
	return c.forgetAfter(obj, len(o.DryRun) > 0, c.Client.Create(ctx, obj, opts...))
}

func (c *forgettingClient) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	o := &client.UpdateOptions{}
	o.ApplyOptions(opts)
	return c.forgetAfter(obj, len(o.DryRun) > 0, c.Client.Update(ctx, obj, opts...))
}

func (c *forgettingClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	o := &client.PatchOptions{}
	o.ApplyOptions(opts)
	return c.forgetAfter(obj, len(o.DryRun) > 0, c.Client.Patch(ctx, obj, patch, opts...))
}

func (c *forgettingClient) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	o := &client.DeleteOptions{}
	o.ApplyOptions(opts)
	return c.forgetAfter(obj, len(o.DryRun) > 0, c.Client.Delete(ctx, obj, opts...))
}

// forgetAfter forgets, after a write (not a dry-run, which stores
// nothing), the answers of obj's namespace when it failed, and obj's own
// when it succeeded: they were about a resourceVersion it no longer has.
func (c *forgettingClient) forgetAfter(obj client.Object, dryRun bool, err error) error {
	if dryRun {
		return err
	}
	ns, name := obj.GetNamespace(), obj.GetName()
	c.memo.forget(func(s dryRunSlot) bool {
		return s.target == c.key && s.namespace == ns && (err != nil || s.name == name)
	})
	return err
}

// get returns the answer remembered in slot for request, if any and still
// fresh.
func (m *DryRunMemo) get(slot dryRunSlot, request string) (dryRunAnswer, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	a, ok := m.entries[slot]
	if !ok || a.request != request || m.now().Sub(a.at) >= m.ttl() {
		return dryRunAnswer{}, false
	}
	m.hits++
	return a, true
}

// put remembers a in slot, replacing what it had; once a TTL, it drops the
// answers past it, so that objects no longer asked about do not stay.
func (m *DryRunMemo) put(slot dryRunSlot, a dryRunAnswer) {
	now := m.now()
	a.at = now
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.entries == nil {
		m.entries, m.swept = map[dryRunSlot]dryRunAnswer{}, now
	}
	if now.Sub(m.swept) >= m.ttl() {
		for s, e := range m.entries {
			if now.Sub(e.at) >= m.ttl() {
				delete(m.entries, s)
			}
		}
		m.swept = now
	}
	m.entries[slot] = a
}

// forget drops the answers of the slots drop selects.
func (m *DryRunMemo) forget(drop func(dryRunSlot) bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for s := range m.entries {
		if drop(s) {
			delete(m.entries, s)
		}
	}
}

// ForgetTarget drops the answers of target key: its client is gone.
func (m *DryRunMemo) ForgetTarget(key string) {
	if m != nil {
		m.forget(func(s dryRunSlot) bool { return s.target == key })
	}
}

// Reset drops every answer: the CustomResourceDefinitions changed.
func (m *DryRunMemo) Reset() {
	if m != nil {
		m.forget(func(dryRunSlot) bool { return true })
	}
}

// Len is the number of answers remembered.
func (m *DryRunMemo) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.entries)
}

// Hits is how many times a remembered answer was used.
func (m *DryRunMemo) Hits() uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.hits
}

func (m *DryRunMemo) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

func (m *DryRunMemo) ttl() time.Duration {
	if m.TTL > 0 {
		return m.TTL
	}
	return DefaultDryRunTTL
}
