package chaos

import (
	"bufio"
	"context"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

func TestFaultPlan(t *testing.T) {
	const draws = 100000
	tests := []struct {
		name string
		// plan is the plan drawn from.
		plan FaultPlan
		// lo and hi bound the share of requests faulted.
		lo, hi float64
	}{
		{name: "no faults", plan: FaultPlan{Rate: 0, Seed: 1}, lo: 0, hi: 0},
		{name: "the lossy scenario's fault rate, 5 %", plan: FaultPlan{Rate: faultRate, Seed: 1}, lo: 0.045, hi: 0.055},
		{name: "another seed", plan: FaultPlan{Rate: 0.05, Seed: 1796138205004530831}, lo: 0.045, hi: 0.055},
		{name: "every request", plan: FaultPlan{Rate: 1, Seed: 7}, lo: 1, hi: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			var counts [len(faultNames)]int
			for n := range uint64(draws) {
				counts[tt.plan.Decide(n)]++
			}
			faulted := float64(draws-counts[FaultNone]) / draws
			g.Expect(faulted).To(BeNumerically(">=", tt.lo))
			g.Expect(faulted).To(BeNumerically("<=", tt.hi))
			if faulted == 0 {
				return
			}
			// Each fault is about a quarter of the faulted requests.
			for _, f := range []Fault{FaultError, FaultThrottle, FaultStall, FaultLost} {
				share := float64(counts[f]) / (faulted * draws)
				g.Expect(share).To(BeNumerically("~", 1.0/4, 0.05), "share of %s", f)
			}
		})
	}
}

func TestFaultPlanRepeats(t *testing.T) {
	g := NewWithT(t)
	a, b := FaultPlan{Rate: 0.05, Seed: 42}, FaultPlan{Rate: 0.05, Seed: 43}
	var first, again, other []Fault
	for n := range uint64(2000) {
		first, again, other = append(first, a.Decide(n)), append(again, a.Decide(n)), append(other, b.Decide(n))
	}
	g.Expect(again).To(Equal(first), "the same seed, the same plan")
	g.Expect(other).NotTo(Equal(first), "another seed, another plan")
	g.Expect([]string{FaultNone.String(), FaultError.String(), FaultThrottle.String(), FaultStall.String(), FaultLost.String()}).
		To(Equal([]string{"none", "500", "429", "stall", "lost"}))
}

// upstreamKubeconfig writes a kubeconfig for the TLS server s.
func upstreamKubeconfig(t *testing.T, s *httptest.Server) string {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["c"] = &clientcmdapi.Cluster{Server: s.URL,
		CertificateAuthorityData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw})}
	kc.AuthInfos["u"] = &clientcmdapi.AuthInfo{}
	kc.Contexts["x"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	kc.CurrentContext = "x"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestProxy runs the proxy between a client and a TLS server: it forwards
// what its plan does not fault, answers 500 and 429 (with Retry-After)
// without forwarding, forwards a stalled request after the stall, and
// streams a watch as it comes.
func TestProxy(t *testing.T) {
	g := NewWithT(t)
	chunk, release := make(chan struct{}), make(chan struct{})
	var upstreamHits atomic.Int64
	upstream := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		upstreamHits.Add(1)
		if r.URL.Query().Get("watch") != "true" {
			_, _ = io.WriteString(w, "upstream "+r.URL.Path)
			return
		}
		_, _ = io.WriteString(w, "first event\n")
		w.(http.Flusher).Flush()
		close(chunk)
		<-release
		_, _ = io.WriteString(w, "second event\n")
	}))
	upstream.EnableHTTP2 = true
	upstream.StartTLS()
	defer upstream.Close()
	kubeconfig := upstreamKubeconfig(t, upstream)

	get := func(p *Proxy, path string) (*http.Response, string) {
		cfg, err := clientcmd.BuildConfigFromFlags("", p.Kubeconfig)
		g.Expect(err).NotTo(HaveOccurred())
		c, err := rest.HTTPClientFor(cfg)
		g.Expect(err).NotTo(HaveOccurred())
		resp, err := c.Get(cfg.Host + path)
		g.Expect(err).NotTo(HaveOccurred())
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		g.Expect(err).NotTo(HaveOccurred())
		return resp, string(b)
	}

	clean, err := startProxy(kubeconfig, FaultPlan{}, 0)
	g.Expect(err).NotTo(HaveOccurred())
	defer clean.Close()
	resp, body := get(clean, "/version")
	g.Expect(resp.StatusCode).To(Equal(http.StatusOK))
	g.Expect(body).To(Equal("upstream /version"))

	// Every request faulted: find the seed's first request of each fault.
	plan := FaultPlan{Rate: 1, Seed: 3}
	faulty, err := startProxy(kubeconfig, plan, 0)
	g.Expect(err).NotTo(HaveOccurred())
	defer faulty.Close()
	seen := map[Fault]bool{}
	for n := uint64(0); len(seen) < 4; n++ {
		f := plan.Decide(n)
		if f == FaultLost {
			// Forwarded, and the answer lost: the client sees its stream
			// reset, not a status.
			before := upstreamHits.Load()
			cfg, err := clientcmd.BuildConfigFromFlags("", faulty.Kubeconfig)
			g.Expect(err).NotTo(HaveOccurred())
			c, err := rest.HTTPClientFor(cfg)
			g.Expect(err).NotTo(HaveOccurred())
			resp, err := c.Get(cfg.Host + "/api")
			if err == nil {
				_, err = io.ReadAll(resp.Body)
				resp.Body.Close()
			}
			g.Expect(err).To(HaveOccurred(), "the response is lost")
			g.Expect(upstreamHits.Load()).To(Equal(before+1), "the API server had it")
			seen[f] = true
			continue
		}
		resp, body := get(faulty, "/api")
		switch f {
		case FaultError:
			g.Expect(resp.StatusCode).To(Equal(http.StatusInternalServerError))
			g.Expect(body).To(ContainSubstring(`"reason":"InternalError"`))
		case FaultThrottle:
			g.Expect(resp.StatusCode).To(Equal(http.StatusTooManyRequests))
			g.Expect(resp.Header.Get("Retry-After")).To(Equal("1"))
		case FaultStall:
			g.Expect(resp.StatusCode).To(Equal(http.StatusOK))
			g.Expect(body).To(Equal("upstream /api"))
		}
		seen[f] = true
	}
	c := faulty.Counts()
	g.Expect(c.Requests).To(Equal(c.Faults()))
	g.Expect(c.Errors).To(BeNumerically(">", 0))
	g.Expect(c.Throttles).To(BeNumerically(">", 0))
	g.Expect(c.Stalls).To(BeNumerically(">", 0))
	g.Expect(c.Lost).To(BeNumerically(">", 0))

	// A watch streams through: its first event arrives while the upstream
	// still holds the second back.
	cfg, err := clientcmd.BuildConfigFromFlags("", clean.Kubeconfig)
	g.Expect(err).NotTo(HaveOccurred())
	hc, err := rest.HTTPClientFor(cfg)
	g.Expect(err).NotTo(HaveOccurred())
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, cfg.Host+"/api/v1/pods?watch=true", nil)
	g.Expect(err).NotTo(HaveOccurred())
	wresp, err := hc.Do(req)
	g.Expect(err).NotTo(HaveOccurred())
	defer wresp.Body.Close()
	lines := bufio.NewReader(wresp.Body)
	line, err := lines.ReadString('\n')
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(line).To(Equal("first event\n"))
	<-chunk
	close(release)
	line, err = lines.ReadString('\n')
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(line).To(Equal("second event\n"))
	g.Expect(clean.Counts()).To(Equal(ProxyCounts{Requests: 2, Watches: 1}))
}

// TestProxyCutsWatch: a watch the plan faults with FaultLost streams its
// events until CutAfter, then its stream is reset, as a connection that
// drops mid-watch; the client sees an error, not a clean end.
func TestProxyCutsWatch(t *testing.T) {
	g := NewWithT(t)
	upstream := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "first event\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	upstream.EnableHTTP2 = true
	upstream.StartTLS()
	defer upstream.Close()
	plan := FaultPlan{Rate: 1}
	for plan.Decide(0) != FaultLost {
		plan.Seed++
	}
	g.Expect(plan.CutAfter(0)).To(And(BeNumerically(">=", 500*time.Millisecond), BeNumerically("<=", 5*time.Second)))
	p, err := startProxy(upstreamKubeconfig(t, upstream), plan, 0)
	g.Expect(err).NotTo(HaveOccurred())
	defer p.Close()
	cfg, err := clientcmd.BuildConfigFromFlags("", p.Kubeconfig)
	g.Expect(err).NotTo(HaveOccurred())
	hc, err := rest.HTTPClientFor(cfg)
	g.Expect(err).NotTo(HaveOccurred())
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, cfg.Host+"/api/v1/pods?watch=true", nil)
	g.Expect(err).NotTo(HaveOccurred())
	start := time.Now()
	resp, err := hc.Do(req)
	g.Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	lines := bufio.NewReader(resp.Body)
	line, err := lines.ReadString('\n')
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(line).To(Equal("first event\n"))
	_, err = lines.ReadString('\n')
	g.Expect(err).To(HaveOccurred())
	g.Expect(err).NotTo(MatchError(io.EOF), "reset, not a clean end")
	g.Expect(time.Since(start)).To(BeNumerically(">=", plan.CutAfter(0)))
	g.Expect(p.Counts()).To(Equal(ProxyCounts{Requests: 1, Watches: 1, Cuts: 1}))
}
