package main

import (
	"os"
	"runtime/debug"
	"testing"

	. "github.com/onsi/gomega"
)

// TestSetGCPercent: without GOGC the collector targets defaultGCPercent;
// a GOGC the operator sets wins, off included.
func TestSetGCPercent(t *testing.T) {
	g := NewWithT(t)
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	if v, ok := os.LookupEnv("GOGC"); ok {
		g.Expect(os.Unsetenv("GOGC")).To(Succeed())
		defer os.Setenv("GOGC", v) //nolint:errcheck // restores the caller's environment
	}
	for _, tc := range []struct {
		gogc string
		set  bool
		want int
	}{{want: defaultGCPercent}, {gogc: "200", set: true, want: 200}, {gogc: "off", set: true, want: -1}} {
		if tc.set {
			t.Setenv("GOGC", tc.gogc)
			// The runtime reads GOGC at start; a test sets what it would have read.
			if tc.gogc == "off" {
				debug.SetGCPercent(-1)
			} else {
				debug.SetGCPercent(tc.want)
			}
		}
		g.Expect(setGCPercent()).To(Equal(tc.want), "GOGC=%q", tc.gogc)
		g.Expect(debug.SetGCPercent(100)).To(Equal(tc.want))
	}
}
