package chaos

import (
	"testing"

	. "github.com/onsi/gomega"
)

func TestCheckRetryStorm(t *testing.T) {
	faultFree := Result{Requests: 1000, Proxy: &ProxyCounts{Requests: 1010}}
	tests := []struct {
		name string
		// lossy and faultFree are the two runs.
		lossy, faultFree Result
		// audit and proxy are the ratios.
		audit, proxy float64
		// want are the violations.
		want []string
	}{
		{name: "within 2×", lossy: Result{Requests: 1300, Proxy: &ProxyCounts{Requests: 1400}}, faultFree: faultFree, audit: 1.3, proxy: 1400.0 / 1010},
		{name: "exactly 2×", lossy: Result{Requests: 2000, Proxy: &ProxyCounts{Requests: 2020}}, faultFree: faultFree, audit: 2, proxy: 2},
		{name: "a storm the proxy counts: faulted requests never reach the API server", lossy: Result{Requests: 1900, Proxy: &ProxyCounts{Requests: 5050}},
			faultFree: faultFree, audit: 1.9, proxy: 5,
			want: []string{"no-retry-storm: the controller sent 5050 requests, 5.00× the fault-free run's 1010"}},
		{name: "a storm both count", lossy: Result{Requests: 2500, Proxy: &ProxyCounts{Requests: 2600}}, faultFree: faultFree, audit: 2.5, proxy: 2600.0 / 1010,
			want: []string{"no-retry-storm: 2500 requests reached the API server, 2.50× the fault-free run's 1000",
				"no-retry-storm: the controller sent 2600 requests, 2.57× the fault-free run's 1010"}},
		{name: "nothing to compare with", lossy: Result{Requests: 10, Proxy: &ProxyCounts{Requests: 10}}, faultFree: Result{},
			want: []string{"no-retry-storm: the fault-free run counted no requests to compare with"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			audit, proxy := RequestRatios(tt.lossy, tt.faultFree)
			g.Expect(audit).To(BeNumerically("~", tt.audit, 1e-9))
			g.Expect(proxy).To(BeNumerically("~", tt.proxy, 1e-9))
			got := violationStrings(CheckRetryStorm(tt.lossy, tt.faultFree))
			g.Expect(got).To(Equal(tt.want))
		})
	}
}
