package chaos

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Fault is what the lossy scenario's proxy does to one request.
type Fault int

// The faults, in the order Decide draws them.
const (
	// FaultNone forwards the request.
	FaultNone Fault = iota
	// FaultError answers 500 Internal Server Error without forwarding.
	FaultError
	// FaultThrottle answers 429 Too Many Requests with Retry-After: 1,
	// without forwarding, as the API server's priority and fairness does.
	FaultThrottle
	// FaultStall waits (stallFor) before it forwards the request.
	FaultStall
	// FaultLost forwards the request, so the API server acts on it (a write
	// is stored), and loses the response: the client's stream is reset, as
	// when a connection drops after the server answered. A watch is
	// forwarded instead and its stream cut midway (CutAfter), as a
	// connection that drops during a watch.
	FaultLost
)

// stallFor is how long a stalled request waits before it is forwarded.
const stallFor = 5 * time.Second

var faultNames = [...]string{"none", "500", "429", "stall", "lost"}

func (f Fault) String() string { return faultNames[f] }

// FaultPlan decides which requests the proxy faults: a share Rate of them,
// each fault as likely as the others, drawn from Seed and the request's
// number alone, so a run's plan can be repeated.
type FaultPlan struct {
	// Rate is the share of requests faulted, between 0 and 1.
	Rate float64
	// Seed seeds the draws (CHAOS_SEED).
	Seed int64
}

// Decide returns the fault of the proxy's nth request (from 0).
func (p FaultPlan) Decide(n uint64) Fault {
	if p.Rate <= 0 {
		return FaultNone
	}
	rng := rand.New(rand.NewPCG(uint64(p.Seed), n)) //nolint:gosec // fault draws, not secrets
	if rng.Float64() >= p.Rate {
		return FaultNone
	}
	return Fault(1 + rng.IntN(len(faultNames)-1))
}

// CutAfter is how long the proxy's nth request, a watch it faults with
// FaultLost, streams before it is cut: 0.5 to 5 s, from Seed and n.
func (p FaultPlan) CutAfter(n uint64) time.Duration {
	rng := rand.New(rand.NewPCG(uint64(p.Seed)^0x5eed, n)) //nolint:gosec // fault draws, not secrets
	return 500*time.Millisecond + time.Duration(rng.Int64N(int64(4500*time.Millisecond)))
}

// ProxyCounts are the requests the proxy received and what it did to them.
type ProxyCounts struct {
	// Requests is every request received, faulted ones included.
	Requests int64 `json:"requests"`
	// Watches are the requests among them with watch=true.
	Watches int64 `json:"watches"`
	// Errors, Throttles and Stalls count each fault; Lost the requests
	// forwarded whose response was lost, Cuts the watches cut midway.
	Errors    int64 `json:"errors"`
	Throttles int64 `json:"throttles"`
	Stalls    int64 `json:"stalls"`
	Lost      int64 `json:"lost"`
	Cuts      int64 `json:"cuts"`
}

// Faults is the number of requests faulted.
func (c ProxyCounts) Faults() int64 { return c.Errors + c.Throttles + c.Stalls + c.Lost + c.Cuts }

// Proxy is a reverse proxy on 127.0.0.1 between the controller and the API
// server. It terminates TLS with a certificate of its own and forwards
// with the controller user's client certificate, so the API server (and
// its audit log) sees the controller's user; it faults requests as its
// plan says: before they are forwarded (500, 429, a stall) or after (a
// lost response, a watch cut midway).
type Proxy struct {
	// Kubeconfig is the controller user's kubeconfig with the proxy as its
	// server.
	Kubeconfig string

	plan     FaultPlan
	stall    time.Duration
	srv      *httptest.Server
	rp       *httputil.ReverseProxy
	dir      string
	received atomic.Uint64
	watches  atomic.Int64
	cuts     atomic.Int64
	faults   [len(faultNames)]atomic.Int64
}

// StartProxy starts a proxy to the API server of kubeconfig, as its user,
// with plan.
func StartProxy(kubeconfig string, plan FaultPlan) (*Proxy, error) {
	return startProxy(kubeconfig, plan, stallFor)
}

// startProxy is StartProxy with stalls of stall (shorter in tests).
func startProxy(kubeconfig string, plan FaultPlan, stall time.Duration) (*Proxy, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("failed to read the kubeconfig %s: %w", kubeconfig, err)
	}
	upstream, err := url.Parse(cfg.Host)
	if err != nil {
		return nil, fmt.Errorf("failed to parse the API server's address %q: %w", cfg.Host, err)
	}
	transport, err := rest.TransportFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("failed to build the proxy's transport: %w", err)
	}
	quiet := log.New(io.Discard, "", 0)
	p := &Proxy{plan: plan, stall: stall}
	p.rp = &httputil.ReverseProxy{
		Rewrite:   func(pr *httputil.ProxyRequest) { pr.SetURL(upstream) },
		Transport: transport,
		// Watches stream: every chunk is passed on at once.
		FlushInterval: -1,
		ErrorLog:      quiet,
	}
	p.srv = httptest.NewUnstartedServer(p)
	p.srv.EnableHTTP2 = true
	p.srv.Config.ErrorLog = quiet
	p.srv.StartTLS()
	if p.dir, err = os.MkdirTemp("", "tdc-chaos-proxy-"); err != nil {
		p.Close()
		return nil, err
	}
	if p.Kubeconfig, err = p.writeKubeconfig(kubeconfig); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

// writeKubeconfig writes kubeconfig again with the proxy as every
// cluster's server, and the proxy's certificate as its CA.
func (p *Proxy) writeKubeconfig(kubeconfig string) (string, error) {
	kc, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		return "", fmt.Errorf("failed to read the kubeconfig %s: %w", kubeconfig, err)
	}
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: p.srv.Certificate().Raw})
	for _, c := range kc.Clusters {
		c.Server, c.CertificateAuthority, c.CertificateAuthorityData = p.srv.URL, "", ca
	}
	path := filepath.Join(p.dir, "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		return "", fmt.Errorf("failed to write the proxy's kubeconfig: %w", err)
	}
	return path, nil
}

// ServeHTTP faults the request as the plan says, or forwards it.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	n := p.received.Add(1) - 1
	f := p.plan.Decide(n)
	watch := false
	if q := req.URL.Query().Get("watch"); q == "true" || q == "1" {
		p.watches.Add(1)
		watch = true
	}
	if f == FaultLost && watch {
		p.cuts.Add(1)
		ctx, cancel := context.WithTimeout(req.Context(), p.plan.CutAfter(n))
		defer cancel()
		p.rp.ServeHTTP(w, req.WithContext(ctx))
		// A watch cut off by its deadline would end cleanly: reset it,
		// as a dropped connection does.
		panic(http.ErrAbortHandler)
	}
	p.faults[f].Add(1)
	switch f {
	case FaultLost:
		p.rp.ServeHTTP(discard{header: http.Header{}}, req)
		panic(http.ErrAbortHandler)
	case FaultError:
		writeStatus(w, http.StatusInternalServerError, "InternalError")
		return
	case FaultThrottle:
		w.Header().Set("Retry-After", "1")
		writeStatus(w, http.StatusTooManyRequests, "TooManyRequests")
		return
	case FaultStall:
		t := time.NewTimer(p.stall)
		defer t.Stop()
		select {
		case <-req.Context().Done():
			return
		case <-t.C:
		}
	}
	p.rp.ServeHTTP(w, req)
}

// writeStatus answers a metav1.Status, as the API server does.
func writeStatus(w http.ResponseWriter, code int, reason string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": code, "reason": reason,
		"message": "injected by the chaos proxy",
	})
}

// discard is a response writer that drops the response of a request
// whose answer the proxy loses.
type discard struct{ header http.Header }

func (d discard) Header() http.Header       { return d.header }
func (discard) Write(b []byte) (int, error) { return len(b), nil }
func (discard) WriteHeader(int)             {}

// Counts returns the requests received so far, and the faults.
func (p *Proxy) Counts() ProxyCounts {
	return ProxyCounts{Requests: int64(p.received.Load()), Watches: p.watches.Load(), //nolint:gosec // a count
		Errors: p.faults[FaultError].Load(), Throttles: p.faults[FaultThrottle].Load(), Stalls: p.faults[FaultStall].Load(),
		Lost: p.faults[FaultLost].Load(), Cuts: p.cuts.Load()}
}

// Close stops the proxy (its client connections first, so that open
// watches end) and removes its kubeconfig. It is safe to call on nil.
func (p *Proxy) Close() {
	if p == nil {
		return
	}
	if p.srv != nil {
		p.srv.CloseClientConnections()
		p.srv.Close()
	}
	if p.dir != "" {
		_ = os.RemoveAll(p.dir)
	}
}
