package chaos

import (
	"math"
	"slices"
	"time"
)

// SoakSample is one reading of the controller during the soak: its
// resident memory, its live heap and heap in use (after a garbage
// collection) and its goroutines, Incarnation counting its restarts (0 for
// the first process).
type SoakSample struct {
	At          time.Time `json:"at"`
	Incarnation int       `json:"incarnation"`
	// Since is how long that process had run.
	Since    time.Duration `json:"since"`
	RSSBytes int64         `json:"rssBytes"`
	// HeapBytes is the live heap: the bytes of the objects a collection
	// left (go_memstats_heap_alloc_bytes right after it).
	HeapBytes int64 `json:"heapBytes"`
	// HeapInuseBytes is the heap's spans in use then
	// (go_memstats_heap_inuse_bytes): the live heap and the free room in
	// spans that hold live objects, which grows when a burst of
	// allocations (informers relisting) leaves spans sparsely used.
	HeapInuseBytes int64 `json:"heapInuseBytes"`
	// ProfiledBytes is the live heap as the heap profile read with that
	// collection estimates it (ProfiledLiveBytes): unlike HeapBytes, it
	// counts nothing allocated between the collection and the scrape.
	ProfiledBytes int64 `json:"profiledBytes"`
	Goroutines    int   `json:"goroutines"`
}

// Slope is a figure's trend over the soak, per hour: Value is the least
// squares slope within each process (each process's samples measured from
// their own means, so that a restart, which starts memory afresh, is not a
// trend), fitted on Samples samples of Processes processes.
type Slope struct {
	PerHour   float64 `json:"perHour"`
	Samples   int     `json:"samples"`
	Processes int     `json:"processes"`
}

// WithinSlope fits the slope of y over time within each incarnation,
// leaving out each process's first warmup (its informers filling, its
// first passes over the fleet). A process with fewer than 3 samples left
// adds nothing.
func WithinSlope(samples []SoakSample, warmup time.Duration, y func(SoakSample) float64) Slope {
	groups := map[int][]SoakSample{}
	for _, s := range samples {
		if s.Since >= warmup {
			groups[s.Incarnation] = append(groups[s.Incarnation], s)
		}
	}
	var sxy, sxx float64
	var out Slope
	for _, g := range groups {
		if len(g) < 3 {
			continue
		}
		var mx, my float64
		for _, s := range g {
			mx += s.At.Sub(g[0].At).Hours()
			my += y(s)
		}
		mx, my = mx/float64(len(g)), my/float64(len(g))
		for _, s := range g {
			dx := s.At.Sub(g[0].At).Hours() - mx
			sxy += dx * (y(s) - my)
			sxx += dx * dx
		}
		out.Samples += len(g)
		out.Processes++
	}
	if sxx > 0 {
		out.PerHour = sxy / sxx
	}
	return out
}

// ProcessTrend is one controller process's share of the soak: its samples
// after the warm-up, its live heap at the first and last of them, and its
// own slopes (a step, such as an API server restart's, shows in one
// process only).
type ProcessTrend struct {
	Incarnation int     `json:"incarnation"`
	Samples     int     `json:"samples"`
	HeapFirst   int64   `json:"heapFirstBytes"`
	HeapLast    int64   `json:"heapLastBytes"`
	HeapPerHour float64 `json:"heapPerHour"`
	// HeapInuseFirst, HeapInuseLast and HeapInusePerHour are the same of
	// the heap in use.
	HeapInuseFirst   int64   `json:"heapInuseFirstBytes"`
	HeapInuseLast    int64   `json:"heapInuseLastBytes"`
	HeapInusePerHour float64 `json:"heapInusePerHour"`
	RSSPerHour       float64 `json:"rssPerHour"`
	// ProfiledFirst, ProfiledLast and ProfiledPerHour are the same of the
	// profiled live heap.
	ProfiledFirst   int64   `json:"profiledFirstBytes"`
	ProfiledLast    int64   `json:"profiledLastBytes"`
	ProfiledPerHour float64 `json:"profiledPerHour"`
}

// ProcessTrends returns each incarnation's trend after warmup, in order;
// a process with fewer than 3 samples left is left out.
func ProcessTrends(samples []SoakSample, warmup time.Duration) []ProcessTrend {
	by := map[int][]SoakSample{}
	var order []int
	for _, s := range samples {
		if s.Since < warmup {
			continue
		}
		if _, ok := by[s.Incarnation]; !ok {
			order = append(order, s.Incarnation)
		}
		by[s.Incarnation] = append(by[s.Incarnation], s)
	}
	var out []ProcessTrend
	for _, inc := range order {
		g := by[inc]
		if len(g) < 3 {
			continue
		}
		out = append(out, ProcessTrend{Incarnation: inc, Samples: len(g), HeapFirst: g[0].HeapBytes, HeapLast: g[len(g)-1].HeapBytes,
			HeapPerHour:    WithinSlope(g, warmup, func(s SoakSample) float64 { return float64(s.HeapBytes) }).PerHour,
			HeapInuseFirst: g[0].HeapInuseBytes, HeapInuseLast: g[len(g)-1].HeapInuseBytes,
			HeapInusePerHour: WithinSlope(g, warmup, func(s SoakSample) float64 { return float64(s.HeapInuseBytes) }).PerHour,
			ProfiledFirst:    g[0].ProfiledBytes, ProfiledLast: g[len(g)-1].ProfiledBytes,
			ProfiledPerHour: WithinSlope(g, warmup, func(s SoakSample) float64 { return float64(s.ProfiledBytes) }).PerHour,
			RSSPerHour:      WithinSlope(g, warmup, func(s SoakSample) float64 { return float64(s.RSSBytes) }).PerHour})
	}
	return out
}

// HealTimes is the distribution of the time from a drift's write to the
// add-on's correction of it.
type HealTimes struct {
	Drifts   int     `json:"drifts"`
	Healed   int     `json:"healed"`
	P50      float64 `json:"p50Seconds"`
	P90      float64 `json:"p90Seconds"`
	P99      float64 `json:"p99Seconds"`
	Max      float64 `json:"maxSeconds"`
	Under1s  int     `json:"under1s"`
	Under10s int     `json:"under10s"`
}

// Distribution summarizes heal times (seconds) of drifts drifts; a drift
// not healed has no time.
func Distribution(drifts int, healed []float64) HealTimes {
	h := HealTimes{Drifts: drifts, Healed: len(healed)}
	if len(healed) == 0 {
		return h
	}
	s := slices.Clone(healed)
	slices.Sort(s)
	at := func(q float64) float64 { return s[int(math.Ceil(q*float64(len(s))))-1] }
	h.P50, h.P90, h.P99, h.Max = at(0.5), at(0.9), at(0.99), s[len(s)-1]
	for _, v := range s {
		if v < 1 {
			h.Under1s++
		}
		if v < 10 {
			h.Under10s++
		}
	}
	return h
}
