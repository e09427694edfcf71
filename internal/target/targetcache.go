package target

import (
	"container/list"

	"k8s.io/apimachinery/pkg/types"
)

// DefaultMaxTargets bounds the clients Targets keeps: one per cluster and
// identity in use, each with its own discovery cache.
const DefaultMaxTargets = 256

// targetEntry is one cached client and the HelmReleases that use it.
type targetEntry struct {
	target *Target
	users  map[types.NamespacedName]bool
}

// targetCache is an LRU of targets by key that also knows which
// HelmRelease uses which entry. An entry goes when its last HelmRelease
// moves to another key (a rotated kubeconfig Secret is a new key), fails
// to resolve (its Secret is gone), or is gone itself, and the least
// recently used go beyond the bound. So a tenant that rewrites its
// kubeconfig Secret a thousand times holds one client, not a thousand.
// Callers hold Targets.mu.
type targetCache struct {
	max     int
	order   *list.List // of string keys, most recently used first
	entries map[string]*list.Element
	byKey   map[string]*targetEntry
	byHR    map[types.NamespacedName]string
	// evicted is told each key that goes, so what was kept for it (the
	// memo's releases read through it) can go too.
	evicted func(key string)
}

func newTargetCache(limit int, evicted func(string)) *targetCache {
	if limit <= 0 {
		limit = DefaultMaxTargets
	}
	return &targetCache{max: limit, order: list.New(), entries: map[string]*list.Element{},
		byKey: map[string]*targetEntry{}, byHR: map[types.NamespacedName]string{}, evicted: evicted}
}

// get returns the target of key, now used by hr, and moves hr off the key
// it used before.
func (c *targetCache) get(hr types.NamespacedName, key string) (*Target, bool) {
	e, ok := c.byKey[key]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(c.entries[key])
	c.use(hr, key, e)
	return e.target, true
}

// put stores tg under its key for hr, and evicts beyond the bound.
func (c *targetCache) put(hr types.NamespacedName, tg *Target) {
	e := &targetEntry{target: tg, users: map[types.NamespacedName]bool{}}
	c.byKey[tg.Key] = e
	c.entries[tg.Key] = c.order.PushFront(tg.Key)
	c.use(hr, tg.Key, e)
	for c.order.Len() > c.max {
		c.evict(c.order.Back().Value.(string))
	}
}

func (c *targetCache) use(hr types.NamespacedName, key string, e *targetEntry) {
	if old, ok := c.byHR[hr]; ok && old != key {
		c.release(hr, old)
	}
	c.byHR[hr] = key
	e.users[hr] = true
}

// forget drops hr's use of its entry, evicting the entry if nothing else
// uses it.
func (c *targetCache) forget(hr types.NamespacedName) {
	if key, ok := c.byHR[hr]; ok {
		c.release(hr, key)
		delete(c.byHR, hr)
	}
}

func (c *targetCache) release(hr types.NamespacedName, key string) {
	e, ok := c.byKey[key]
	if !ok {
		return
	}
	delete(e.users, hr)
	if len(e.users) == 0 {
		c.evict(key)
	}
}

func (c *targetCache) evict(key string) {
	e, ok := c.byKey[key]
	if !ok {
		return
	}
	for hr := range e.users {
		if c.byHR[hr] == key {
			delete(c.byHR, hr)
		}
	}
	delete(c.byKey, key)
	c.order.Remove(c.entries[key])
	delete(c.entries, key)
	if e.target.closeIdle != nil {
		// A pass still using it keeps its connection until it is idle.
		e.target.closeIdle()
	}
	if c.evicted != nil {
		c.evicted(key)
	}
}

// len returns the number of cached targets.
func (c *targetCache) len() int { return c.order.Len() }
