package pipeline

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// DefaultBudgetHold is how long a claim holds a slot of the budget before a
// pass that sees no rollout in progress may free it: the pass after the
// repoint may read the consumers before the cache shows the write.
const DefaultBudgetHold = time.Minute

// RolloutBudget bounds, across the releases one controller reconciles, how
// many have a rollout the add-on made in progress at once. Each pass
// observes its own release (plan.ReleaseRollingOut of its consumers), and a
// pass that would start a rollout claims a slot first. The count lives in
// memory: after a restart it is rebuilt as the releases' passes run. A nil
// budget has no limit.
type RolloutBudget struct {
	// Max is how many releases may roll out at once; negative: no limit,
	// 0: no rollout may start.
	Max int
	// Hold is how long a claim holds its slot at least (DefaultBudgetHold).
	Hold time.Duration
	now  func() time.Time

	mu      sync.Mutex
	rolling map[types.NamespacedName]time.Time
}

// NewRolloutBudget returns a budget of max releases (negative: no limit).
func NewRolloutBudget(maxReleases int) *RolloutBudget {
	return &RolloutBudget{Max: maxReleases, Hold: DefaultBudgetHold, now: time.Now, rolling: map[types.NamespacedName]time.Time{}}
}

// Observe records whether a rollout the add-on made is in progress in
// hr's release, as its pass read it. A slot claimed less than Hold ago is
// kept whatever the pass read.
func (b *RolloutBudget) Observe(hr types.NamespacedName, rolling bool) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	since, held := b.rolling[hr]
	switch {
	case rolling && !held:
		b.rolling[hr] = time.Time{}
	case !rolling && held && b.now().Sub(since) >= b.Hold:
		delete(b.rolling, hr)
	}
}

// Claim reports whether hr's release may start a rollout, and takes a slot
// for it: one it holds already, or a free one.
func (b *RolloutBudget) Claim(hr types.NamespacedName) bool {
	if b == nil || b.Max < 0 {
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, held := b.rolling[hr]; !held && len(b.rolling) >= b.Max {
		return false
	}
	b.rolling[hr] = b.now()
	return true
}

// Forget frees hr's slot: the HelmRelease is gone.
func (b *RolloutBudget) Forget(hr types.NamespacedName) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.rolling, hr)
}

// InProgress counts the releases holding a slot, for the metrics.
func (b *RolloutBudget) InProgress() int {
	if b == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.rolling)
}
