package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/plan"
)

// DefaultConfirmationTTL bounds how long a remembered answer is used.
// Within it, only an admission webhook's configuration changing could
// change the server's answer to the same request on the same object, and
// that is rare enough to be found an hour later.
const DefaultConfirmationTTL = time.Hour

// Confirmations remembers the server's answers to the dry-runs that
// confirm a template's drift (see pass.confirm), per HelmRelease and
// template. A template whose drift the server keeps confirming, e.g. a
// locked template left drifted behind its replacement, would otherwise cost
// two dry-run requests on every pass of its release, for the same answer.
//
// An answer is used again only for the same request: the same target, the
// same live object (UID and resourceVersion), the same desired object, raw
// changes and requested strategy; and only within the TTL. Only the
// server's answers about the object are remembered (accepted, locked,
// refused); a failure to answer is asked again on the next pass. A
// release's answers are forgotten when one of its passes fails or one of
// its writes fails, so that a write the server refuses after a remembered
// "accepted" is asked about again instead of retried on a stale answer;
// every answer is forgotten when the cluster's CustomResourceDefinitions
// change (Reset), as a new schema or a new version changes what the server
// stores.
//
// It is safe for concurrent use; the controller never runs two passes of
// one HelmRelease at once, so a release's entries have one writer.
type Confirmations struct {
	// TTL is DefaultConfirmationTTL when zero.
	TTL time.Duration
	// Now is time.Now when nil (tests set it).
	Now func() time.Time

	mu      sync.Mutex
	entries map[types.NamespacedName]map[manifest.ID]confirmation
	hits    uint64
}

// confirmation is one remembered answer.
type confirmation struct {
	request string
	at      time.Time
	// What pass.confirm learnt from the server.
	dryRun        plan.DryRun
	dryRunMessage string
	unconfirmed   string
	view          *unstructured.Unstructured
}

// confirmationRequest fingerprints what the server was asked: a change to
// any part of it asks again. ok is false when the request cannot be
// fingerprinted; it is then not remembered.
func confirmationRequest(targetKey string, in *plan.TemplateInput) (string, bool) {
	h := sha256.New()
	enc := json.NewEncoder(h)
	parts := []any{targetKey, string(in.Live.GetUID()), in.Live.GetResourceVersion(), string(in.Requested),
		in.Desired.Object, in.Changes}
	for _, p := range parts {
		if err := enc.Encode(p); err != nil {
			return "", false
		}
	}
	return hex.EncodeToString(h.Sum(nil)), true
}

// get returns the answer remembered for request, if any and still fresh.
func (c *Confirmations) get(hr types.NamespacedName, id manifest.ID, request string) (confirmation, bool) {
	if c == nil {
		return confirmation{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[hr][id]
	if !ok || e.request != request || c.now().Sub(e.at) >= c.ttl() {
		return confirmation{}, false
	}
	c.hits++
	return e, true
}

// put remembers the answer to request, replacing what the template had.
func (c *Confirmations) put(hr types.NamespacedName, id manifest.ID, request string, e confirmation) {
	if c == nil {
		return
	}
	e.request, e.at = request, c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[types.NamespacedName]map[manifest.ID]confirmation{}
	}
	if c.entries[hr] == nil {
		c.entries[hr] = map[manifest.ID]confirmation{}
	}
	c.entries[hr][id] = e
}

// drop forgets what a template had: its drift is no longer confirmed by
// a dry-run (no raw changes, or a template being deleted).
func (c *Confirmations) drop(hr types.NamespacedName, id manifest.ID) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.entries[hr], id)
	if len(c.entries[hr]) == 0 {
		delete(c.entries, hr)
	}
}

// Forget drops every answer remembered for a HelmRelease.
func (c *Confirmations) Forget(hr types.NamespacedName) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.entries, hr)
}

// Reset drops every answer: the CustomResourceDefinitions changed.
func (c *Confirmations) Reset() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries = nil
}

// Len is the number of templates with a remembered answer.
func (c *Confirmations) Len() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, m := range c.entries {
		n += len(m)
	}
	return n
}

// Hits is how many times a remembered answer was used.
func (c *Confirmations) Hits() uint64 {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hits
}

func (c *Confirmations) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func (c *Confirmations) ttl() time.Duration {
	if c.TTL > 0 {
		return c.TTL
	}
	return DefaultConfirmationTTL
}
