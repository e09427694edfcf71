package main

import (
	"os"
	"runtime/debug"
)

// defaultGCPercent is the garbage collector's target when GOGC is not set.
// The controller's heap is mostly its informers' objects, which live as
// long as the process; Go's default of 100 lets the heap grow to twice that
// before collecting, which doubles memory for no benefit, while a pass
// allocates little: 50 trades a little CPU per pass for a smaller RSS
// (docs/benchmarks.md has the figures). Prometheus makes the same trade
// with its own default.
const defaultGCPercent = 50

// setGCPercent applies defaultGCPercent unless GOGC is set, and returns
// the percentage in effect (-1 when GOGC=off).
func setGCPercent() int {
	if _, set := os.LookupEnv("GOGC"); set {
		p := debug.SetGCPercent(100) // read the value GOGC gave
		debug.SetGCPercent(p)
		return p
	}
	debug.SetGCPercent(defaultGCPercent)
	return defaultGCPercent
}
