package scale

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fluxcd/cli-utils/pkg/flowcontrol"
	"golang.org/x/sync/errgroup"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/templatedrift/template-drift-controller/test/harness"
)

// The replay of the write floor: the add-on's writes and dry-runs read
// from the audit log, stripped of their preconditions, and sent again by
// a plain client built as the controller's.

// ConvergenceWrites reads the stored, non-dry-run writes of user received
// in w from the audit log at path, in order.
func ConvergenceWrites(path, user string, w Window) ([]harness.Call, error) {
	return convergenceCalls(path, user, w, func(c harness.Call) bool {
		return !c.IsDryRun() && c.ResponseStatus.Code >= 200 && c.ResponseStatus.Code < 300
	})
}

// ConvergenceDryRuns reads the dry-run writes of user received in w from
// the audit log at path, in order, refused ones too: a refusal (a locked
// template) is the answer the add-on asked for.
func ConvergenceDryRuns(path, user string, w Window) ([]harness.Call, error) {
	return convergenceCalls(path, user, w, harness.Call.IsDryRun)
}

// convergenceCalls reads the writes of user received in w that keep
// takes, in order; access reviews are questions, which store nothing, and
// never taken.
func convergenceCalls(path, user string, w Window, keep func(harness.Call) bool) ([]harness.Call, error) {
	var out []harness.Call
	err := harness.ReadAudit(path, user, func(ev harness.Event) {
		if ev.Stage != "ResponseComplete" || ev.User.Username != user || !w.contains(ev.RequestReceived) {
			return
		}
		if !slices.Contains(writeVerbs, ev.Verb) || slices.Contains(accessReviews, ev.Verb+" "+ev.ObjectRef.Resource) || !keep(ev.Call) {
			return
		}
		out = append(out, ev.Call)
	})
	return out, err
}

// Replay is one write to send again.
type Replay struct {
	Method, URI, ContentType string
	Body                     []byte
	// Code is the status the API server answered the add-on with. A
	// replay of a write the server stored must be stored again; a dry-run
	// the server refused is refused again, with the same code.
	Code int
	// Namespace orders the replay: a namespace's writes are sent in order,
	// by one worker, as one release's pass makes them.
	Namespace string
}

// ReplayOf turns an audited write into the same request without its
// preconditions, which name the first control plane's resourceVersions
// and UIDs: a JSON patch loses its operations on /metadata/resourceVersion,
// a merge patch, create or update its metadata.resourceVersion and
// metadata.uid, a delete its preconditions.
func ReplayOf(c harness.Call) (Replay, error) {
	r := Replay{URI: c.RequestURI, Namespace: c.ObjectRef.Namespace, ContentType: "application/json", Code: c.ResponseStatus.Code}
	switch c.Verb {
	case "create":
		r.Method = "POST"
	case "update":
		r.Method = "PUT"
	case "patch":
		r.Method = "PATCH"
	case "delete":
		r.Method = "DELETE"
	default:
		return Replay{}, fmt.Errorf("%s %s is not a write the replay sends", c.Verb, c.RequestURI)
	}
	body := bytes.TrimSpace(c.RequestObject)
	if len(body) == 0 {
		return r, nil
	}
	if body[0] == '[' {
		var ops []map[string]any
		if err := json.Unmarshal(body, &ops); err != nil {
			return Replay{}, fmt.Errorf("failed to parse the JSON patch of %s: %w", c.RequestURI, err)
		}
		kept := ops[:0]
		for _, op := range ops {
			if op["path"] != "/metadata/resourceVersion" {
				kept = append(kept, op)
			}
		}
		b, err := json.Marshal(kept)
		r.Body, r.ContentType = b, "application/json-patch+json"
		return r, err
	}
	var obj map[string]any
	if err := json.Unmarshal(body, &obj); err != nil {
		return Replay{}, fmt.Errorf("failed to parse the body of %s: %w", c.RequestURI, err)
	}
	if meta, ok := obj["metadata"].(map[string]any); ok {
		delete(meta, "resourceVersion")
		delete(meta, "uid")
		if len(meta) == 0 {
			delete(obj, "metadata")
		}
	}
	delete(obj, "preconditions")
	if r.Method == "PATCH" {
		r.ContentType = "application/merge-patch+json"
	}
	b, err := json.Marshal(obj)
	r.Body = b
	return r, err
}

// replaysOf turns audited calls into replays, in order.
func replaysOf(calls []harness.Call) ([]Replay, error) {
	out := make([]Replay, 0, len(calls))
	for _, c := range calls {
		rp, err := ReplayOf(c)
		if err != nil {
			return nil, err
		}
		out = append(out, rp)
	}
	return out, nil
}

// limiterKey names the rate limiter a write of uri goes through in the
// controller: controller-runtime's client builds a REST client, and with
// it a client-side rate limiter of --kube-api-qps and --kube-api-burst,
// for each kind (a resource and its subresources share it), and the
// event recorder has a client of its own.
func limiterKey(uri string) string {
	path, _, _ := strings.Cut(uri, "?")
	parts := strings.Split(strings.TrimPrefix(path, "/"), "/")
	var gv string
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		gv, parts = parts[1], parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		gv, parts = parts[1]+"/"+parts[2], parts[3:]
	default:
		return path
	}
	if len(parts) >= 2 && parts[0] == "namespaces" && len(parts) > 2 {
		parts = parts[2:]
	}
	if len(parts) == 0 {
		return gv
	}
	if parts[0] == "events" {
		return "events"
	}
	return gv + "/" + parts[0]
}

// limitedClients are the replay's REST clients, one for each limiterKey,
// each with its own rate limiter, sharing one connection pool.
type limitedClients struct {
	cfg *rest.Config
	mu  sync.Mutex
	by  map[string]*rest.RESTClient
}

func newLimitedClients(cfg *rest.Config) *limitedClients {
	return &limitedClients{cfg: cfg, by: map[string]*rest.RESTClient{}}
}

func (l *limitedClients) get(key string) (*rest.RESTClient, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c, ok := l.by[key]; ok {
		return c, nil
	}
	c, err := rest.UnversionedRESTClientFor(l.cfg)
	if err != nil {
		return nil, err
	}
	l.by[key] = c
	return c, nil
}

// sendReplays sends replays with the clients of qps and burst from
// workers goroutines, each namespace's writes in order by one of them,
// and returns the seconds from the first to the last answer. An answer
// other than the add-on's (a write refused, a refused dry-run accepted)
// fails the measure: the replay would not be the same work.
func sendReplays(ctx context.Context, kubeconfig string, replays []Replay, workers int, qps float32, burst int) (seconds float64, unlimited bool, err error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return 0, false, err
	}
	// The controller's client is built as every Flux controller's
	// (fluxcd/pkg/runtime/client.GetConfigOrDie): without a rate limit
	// where the API server has API Priority and Fairness, which then
	// shares it out; with --kube-api-qps and --kube-api-burst otherwise.
	if unlimited, err = flowcontrol.IsEnabled(ctx, cfg); err != nil {
		return 0, false, fmt.Errorf("failed to ask whether the API server has API Priority and Fairness: %w", err)
	}
	cfg.QPS, cfg.Burst = qps, burst
	if unlimited {
		cfg.QPS, cfg.Burst = -1, -1
	}
	// The controller's client does not print the API server's warnings
	// (deprecated versions) either.
	cfg.WarningHandler = rest.NoWarnings{}
	cfg.NegotiatedSerializer = clientgoscheme.Codecs.WithoutConversion()
	clients := newLimitedClients(cfg)
	var order []string
	byNamespace := map[string][]Replay{}
	for _, rp := range replays {
		if _, ok := byNamespace[rp.Namespace]; !ok {
			order = append(order, rp.Namespace)
		}
		byNamespace[rp.Namespace] = append(byNamespace[rp.Namespace], rp)
	}
	queue := make(chan string, len(order))
	for _, ns := range order {
		queue <- ns
	}
	close(queue)
	var once sync.Once
	var start time.Time
	g, gctx := errgroup.WithContext(ctx)
	for range workers {
		g.Go(func() error {
			for ns := range queue {
				for _, rp := range byNamespace[ns] {
					once.Do(func() { start = time.Now() })
					rc, err := clients.get(limiterKey(rp.URI))
					if err != nil {
						return err
					}
					req := rc.Verb(rp.Method).RequestURI(rp.URI).SetHeader("Content-Type", rp.ContentType)
					if rp.Body != nil {
						req = req.Body(rp.Body)
					}
					res := req.Do(gctx)
					var code int
					res.StatusCode(&code)
					if err := sameAnswer(rp, code, res.Error()); err != nil {
						return err
					}
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return 0, false, err
	}
	if start.IsZero() {
		return 0, false, fmt.Errorf("no write to replay")
	}
	return time.Since(start).Seconds(), unlimited, nil
}

// sameAnswer checks that the server answered a replay as it answered the
// add-on: stored (2xx) where it stored, refused with the same code where
// it refused.
func sameAnswer(rp Replay, code int, err error) error {
	switch {
	case rp.Code >= 200 && rp.Code < 300 && err != nil:
		return fmt.Errorf("the replay of %s %s was refused: %w", rp.Method, rp.URI, err)
	case (rp.Code < 200 || rp.Code >= 300) && code != rp.Code && err != nil:
		return fmt.Errorf("the replay of %s %s got %d, the add-on got %d: %w", rp.Method, rp.URI, code, rp.Code, err)
	case (rp.Code < 200 || rp.Code >= 300) && code != rp.Code:
		return fmt.Errorf("the replay of %s %s got %d, the add-on got %d", rp.Method, rp.URI, code, rp.Code)
	}
	return nil
}
