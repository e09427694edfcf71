package release

import (
	"container/list"
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// defaultMemoSize bounds the memo. One entry per release Secret the
// controller looks at is plenty: a HelmRelease needs its latest release and,
// at most, the one deployed before it.
const defaultMemoSize = 256

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
}

// memo is a size-bounded LRU of decoded releases. An entry is valid only for
// the Secret UID and resourceVersion it was decoded from, so a recreated or
// updated Secret is always decoded again.
type memo struct {
	mu    sync.Mutex
	size  int
	order *list.List // of *memoEntry, most recently used first
	items map[memoKey]*list.Element
}

func newMemo(size int) *memo {
	return &memo{size: size, order: list.New(), items: map[memoKey]*list.Element{}}
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

// put stores e, replacing any older version of the same Secret and evicting
// the least recently used entries beyond the size bound.
func (m *memo) put(e *memoEntry) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if el, ok := m.items[e.key]; ok {
		el.Value = e
		m.order.MoveToFront(el)
		return
	}
	m.items[e.key] = m.order.PushFront(e)
	for m.order.Len() > m.size {
		last := m.order.Back()
		m.order.Remove(last)
		delete(m.items, last.Value.(*memoEntry).key)
	}
}

// len returns the number of entries, for tests.
func (m *memo) len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.order.Len()
}
