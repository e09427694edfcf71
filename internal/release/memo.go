package release

import (
	"container/list"
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// DefaultMemoBytes bounds the memo of decoded releases by default. An entry
// costs its manifest compressed (pack) and about 1 KiB: room for thousands
// of releases of a large cluster chart, whose YAML compresses several
// times.
const DefaultMemoBytes = 64 << 20

// memoEntryOverhead is what an entry costs besides its strings: the entry,
// its list element and map slot, the Release and its two sha256 digest
// states (the states of other algorithms count apart).
const memoEntryOverhead = 1 << 10

// memoKey names one release Secret in one cluster, as seen by one identity.
type memoKey struct {
	source, namespace, name string
}

// memoEntry is the outcome of decoding one version of a Secret: a release, or
// an error that the same bytes would produce again (corrupt, too large).
type memoEntry struct {
	key             memoKey
	uid             types.UID
	resourceVersion string
	rel             *Release
	err             error
	// manifest is rel's manifest, prepared when prepared is set, and
	// compressed (pack); manifestLen is its length before compression.
	// rel.Manifest is empty.
	manifest    string
	manifestLen int
	prepared    bool
}

// cost is the memory the entry holds, in bytes. A Release keeps its
// manifest, compressed, and a few short strings; its values and hooks are
// not kept (see digester), and nor is the chart.
func (e *memoEntry) cost() int64 {
	n := int64(memoEntryOverhead + len(e.key.source) + len(e.key.namespace) + len(e.key.name) +
		len(e.uid) + len(e.resourceVersion))
	if e.rel != nil {
		n += int64(len(e.manifest) + len(e.rel.Manifest) + len(e.rel.Name) + len(e.rel.Namespace) + len(e.rel.Status) +
			len(e.rel.ApplyMethod) + len(e.rel.Digest) + len(e.rel.ChartName) + len(e.rel.ChartVersion))
		for _, d := range e.rel.digesters[min(1, len(e.rel.digesters)):] {
			n += int64(len(d.v164.state))
			if d.withRollback != nil {
				n += int64(len(d.withRollback.state))
			}
		}
	}
	if e.err != nil {
		n += int64(len(e.err.Error()))
	}
	return n
}

// memo is an LRU of decoded releases bounded by the bytes its entries hold,
// so a tenant's large releases cannot grow the heap past the bound, however
// many there are. An entry is valid only for the Secret UID and
// resourceVersion it was decoded from, so a recreated or updated Secret is
// always decoded again.
type memo struct {
	mu       sync.Mutex
	maxBytes int64
	bytes    int64
	order    *list.List // of *memoEntry, most recently used first
	items    map[memoKey]*list.Element
}

// newMemo returns a memo of at most maxBytes; <= 0 memoizes nothing.
func newMemo(maxBytes int64) *memo {
	return &memo{maxBytes: maxBytes, order: list.New(), items: map[memoKey]*list.Element{}}
}

// get returns the entry for k if it was decoded from exactly uid and
// resourceVersion.
func (m *memo) get(k memoKey, uid types.UID, resourceVersion string) (*memoEntry, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	el, ok := m.items[k]
	if !ok {
		return nil, false
	}
	e := el.Value.(*memoEntry)
	if e.uid != uid || e.resourceVersion != resourceVersion {
		return nil, false
	}
	m.order.MoveToFront(el)
	return e, true
}

// put stores e, replacing any older version of the same Secret, and evicts
// the least recently used entries until the memo is within its bound. An
// entry larger than the whole bound is not stored (and drops the older
// version it would have replaced).
func (m *memo) put(e *memoEntry) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if el, ok := m.items[e.key]; ok {
		m.remove(el)
	}
	c := e.cost()
	if c > m.maxBytes {
		return
	}
	m.items[e.key] = m.order.PushFront(e)
	m.bytes += c
	for m.bytes > m.maxBytes {
		m.remove(m.order.Back())
	}
}

func (m *memo) remove(el *list.Element) {
	e := el.Value.(*memoEntry)
	m.order.Remove(el)
	delete(m.items, e.key)
	m.bytes -= e.cost()
}

// forget drops every entry of source, for example a client whose target
// is gone.
func (m *memo) forget(source string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, el := range m.items {
		if k.source == source {
			m.remove(el)
		}
	}
}

// size returns the number of entries and the bytes they hold.
func (m *memo) size() (entries int, bytes int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.order.Len(), m.bytes
}

// full reports whether the memo holds nine tenths of its bound or more: a
// warm-up stops there, leaving room for what the passes read that it did
// not reach. A memo of no bytes is always full.
func (m *memo) full() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.bytes >= m.maxBytes-m.maxBytes/10
}
