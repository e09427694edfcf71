package chaos

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

func TestWithinSlope(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	// series returns samples every 10 s of process inc, started at from,
	// for d, of y = base + perHour * hours since the process started.
	series := func(inc int, from time.Time, d time.Duration, base, perHour float64) []SoakSample {
		var out []SoakSample
		for s := time.Duration(0); s < d; s += 10 * time.Second {
			out = append(out, SoakSample{At: from.Add(s), Incarnation: inc, Since: s, RSSBytes: int64(base + perHour*s.Hours())})
		}
		return out
	}
	rss := func(s SoakSample) float64 { return float64(s.RSSBytes) }
	tests := []struct {
		name      string
		samples   []SoakSample
		want      float64
		processes int
	}{
		{name: "flat", samples: series(0, start, 10*time.Minute, 100e6, 0), want: 0, processes: 1},
		{name: "a leak", samples: series(0, start, 10*time.Minute, 100e6, 36e6), want: 36e6, processes: 1},
		{
			// Each restart starts lower than the last process ended: a
			// fit across processes would see a trend that is not there.
			name: "restarts are no trend",
			samples: append(append(series(0, start, 5*time.Minute, 200e6, 0), series(1, start.Add(5*time.Minute), 5*time.Minute, 120e6, 0)...),
				series(2, start.Add(10*time.Minute), 5*time.Minute, 60e6, 0)...),
			want: 0, processes: 3,
		},
		{
			name:    "the warm-up is left out",
			samples: append(series(0, start, time.Minute, 10e6, 600e6), series(0, start.Add(time.Minute), 5*time.Minute, 110e6, 0)...),
			want:    0, processes: 1,
		},
		{name: "too short a process", samples: series(0, start, 80*time.Second, 100e6, 36e6), want: 0, processes: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			got := WithinSlope(tt.samples, time.Minute, rss)
			g.Expect(got.PerHour).To(BeNumerically("~", tt.want, 1e4))
			g.Expect(got.Processes).To(Equal(tt.processes))
		})
	}
}

func TestDistribution(t *testing.T) {
	g := NewWithT(t)
	var healed []float64
	for i := 1; i <= 100; i++ {
		healed = append(healed, float64(i)/10) // 0.1 s to 10 s
	}
	h := Distribution(101, healed)
	g.Expect(h.Drifts).To(Equal(101))
	g.Expect(h.Healed).To(Equal(100))
	g.Expect(h.P50).To(BeNumerically("~", 5.0, 1e-9))
	g.Expect(h.P90).To(BeNumerically("~", 9.0, 1e-9))
	g.Expect(h.P99).To(BeNumerically("~", 9.9, 1e-9))
	g.Expect(h.Max).To(BeNumerically("~", 10.0, 1e-9))
	g.Expect(h.Under1s).To(Equal(9))
	g.Expect(h.Under10s).To(Equal(99))
	g.Expect(Distribution(3, nil)).To(Equal(HealTimes{Drifts: 3}))
}

func TestProcessTrends(t *testing.T) {
	g := NewWithT(t)
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var samples []SoakSample
	for inc, heap := range []int64{100, 200, 300} {
		for s := time.Duration(0); s < 3*time.Minute; s += 10 * time.Second {
			samples = append(samples, SoakSample{At: start.Add(time.Duration(inc)*3*time.Minute + s), Incarnation: inc, Since: s,
				HeapBytes: heap + int64(inc)*int64(s/time.Second), RSSBytes: 1000})
		}
	}
	trends := ProcessTrends(samples, time.Minute)
	g.Expect(trends).To(HaveLen(3))
	g.Expect(trends[0].HeapPerHour).To(BeNumerically("~", 0, 1e-6))
	g.Expect(trends[2].Incarnation).To(Equal(2))
	g.Expect(trends[2].Samples).To(Equal(12))
	g.Expect(trends[2].HeapFirst).To(Equal(int64(300 + 2*60)))
	g.Expect(trends[2].HeapPerHour).To(BeNumerically("~", 2*3600, 1e-6), "2 bytes a second")
	g.Expect(trends[2].RSSPerHour).To(BeNumerically("~", 0, 1e-6))
}
