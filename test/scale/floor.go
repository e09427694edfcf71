package scale

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fluxcd/cli-utils/pkg/flowcontrol"
	"golang.org/x/sync/errgroup"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/templatedrift/template-drift-controller/internal/testenv"
	"github.com/templatedrift/template-drift-controller/test/harness"
)

// The write floor: the time the API server takes for the writes the
// add-on made while it converged, sent by a plain client with the
// controller's client settings and none of its work (no informers, no
// decoding, no diff, no dry-run), on a fresh control plane with the same
// fleet. The add-on's convergence over the floor is what its own work
// costs. The same client first sends the add-on's dry-runs again on that
// fleet, which they leave as it was: their time is the part of that cost
// the design's dry-runs take, whatever the controller's code does, and the
// rest is the controller's start, CPU and queue.

// Floor is the write floor of one run.
type Floor struct {
	// Writes are the writes replayed: every stored write of the add-on
	// until it converged, in the order the audit log has them.
	Writes int `json:"writes"`
	// Seconds is from the first replayed write to the last answer.
	Seconds float64 `json:"seconds"`
	// Workers and QPS, Burst are the replay's concurrency and client
	// rate limit: the controller's --concurrent, --kube-api-qps and
	// --kube-api-burst.
	Workers int     `json:"workers"`
	QPS     float32 `json:"qps"`
	Burst   int     `json:"burst"`
	// Unlimited says the replay's client had no rate limit, as the
	// controller's has none when the API server has API Priority and
	// Fairness: QPS and Burst are then the flags', not applied.
	Unlimited bool `json:"unlimited,omitempty"`
	// Ratio is the add-on's convergence over Seconds.
	Ratio float64 `json:"ratio"`
	// DryRuns are the add-on's dry-runs until it converged, sent again the
	// same way before the writes, and DryRunSeconds their time.
	DryRuns       int     `json:"dryRuns"`
	DryRunSeconds float64 `json:"dryRunSeconds"`
	// RequestRatio is the add-on's convergence over Seconds and
	// DryRunSeconds: what the controller's own work costs beyond the
	// requests it makes.
	RequestRatio float64 `json:"requestRatio,omitempty"`
}

// limit is the replay client's rate limit, as the summary prints it.
func (f Floor) limit() string {
	if f.Unlimited {
		return "no client rate limit: API Priority and Fairness"
	}
	return fmt.Sprintf("QPS %g, burst %d", f.QPS, f.Burst)
}

// The controller's defaults for the flags the replay copies.
const (
	defaultConcurrent = 4
	defaultQPS        = 50
	defaultBurst      = 300
)

// writesPolicy logs user's writes with their bodies (the replay sends
// them again) and every other request at the Metadata level.
func writesPolicy(user string) string {
	return `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Request
  users: ["` + user + `"]
  verbs: ["create", "update", "patch", "delete"]
- level: Metadata
`
}

// clientSettings are the replay's workers, QPS and burst: the
// controller's defaults, or the values args gives them.
func clientSettings(args []string) (workers int, qps float32, burst int, err error) {
	workers, qps, burst = defaultConcurrent, defaultQPS, defaultBurst
	for _, a := range args {
		name, value, ok := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !ok {
			continue
		}
		switch name {
		case "concurrent":
			workers, err = strconv.Atoi(value)
		case "kube-api-qps":
			var f float64
			f, err = strconv.ParseFloat(value, 32)
			qps = float32(f)
		case "kube-api-burst":
			burst, err = strconv.Atoi(value)
		}
		if err != nil {
			return 0, 0, 0, fmt.Errorf("failed to parse the controller argument %q: %w", a, err)
		}
	}
	return workers, qps, burst, nil
}

// ConvergenceWrites reads the stored, non-dry-run writes of user received
// in w from the audit log at path, in order.
func ConvergenceWrites(path, user string, w Window) ([]harness.Call, error) {
	var out []harness.Call
	err := harness.ReadAudit(path, user, func(ev harness.Event) {
		if ev.Stage != "ResponseComplete" || ev.User.Username != user || !w.contains(ev.RequestReceived) {
			return
		}
		if !slices.Contains(writeVerbs, ev.Verb) || ev.IsDryRun() || ev.ResponseStatus.Code < 200 || ev.ResponseStatus.Code >= 300 {
			return
		}
		if slices.Contains(accessReviews, ev.Verb+" "+ev.ObjectRef.Resource) {
			// A question, which stores nothing.
			return
		}
		out = append(out, ev.Call)
	})
	return out, err
}

// ConvergenceDryRuns reads the dry-run writes of user received in w from
// the audit log at path, in order, refused ones too: a refusal (a locked
// template) is the answer the add-on asked for.
func ConvergenceDryRuns(path, user string, w Window) ([]harness.Call, error) {
	var out []harness.Call
	err := harness.ReadAudit(path, user, func(ev harness.Event) {
		if ev.Stage != "ResponseComplete" || ev.User.Username != user || !w.contains(ev.RequestReceived) {
			return
		}
		if !slices.Contains(writeVerbs, ev.Verb) || !ev.IsDryRun() || slices.Contains(accessReviews, ev.Verb+" "+ev.ObjectRef.Resource) {
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

// measureFloor replays the add-on's convergence writes on a fresh control
// plane with the same fleet, and records the floor against the add-on's
// convergence. The controller is stopped first: the two control planes
// share the machine.
func (r *run) measureFloor(ctx context.Context) error {
	if !r.floorMeasured() {
		return nil
	}
	if err := harness.Sleep(ctx, auditFlush); err != nil {
		return err
	}
	writes, err := ConvergenceWrites(r.auditLog, r.target.User, r.convergence)
	if err != nil {
		return err
	}
	dryRuns, err := ConvergenceDryRuns(r.auditLog, r.target.User, r.convergence)
	if err != nil {
		return err
	}
	replays, err := replaysOf(writes)
	if err != nil {
		return err
	}
	dryRunReplays, err := replaysOf(dryRuns)
	if err != nil {
		return err
	}
	workers, qps, burst, err := clientSettings(r.target.Flags)
	if err != nil {
		return err
	}
	// Each shard has its workers and its client's rate limits: the
	// replay's are their sum.
	shards := max(r.target.Shards, 1)
	workers, qps, burst = workers*shards, qps*float32(shards), burst*shards
	r.stopShards()
	dir := filepath.Join(r.dir, "floor")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	flags, _, err := harness.AuditFlags(dir, writesPolicy(r.target.User))
	if err != nil {
		return err
	}
	env, err := testenv.StartWith("bench-floor-"+strconv.Itoa(r.n), testenv.Options{ProviderCRDs: true, APIServerFlags: flags, ExtraCRDDirs: r.target.CRDDirs, OmitKinds: r.fleet.Omit})
	if err != nil {
		return err
	}
	defer func() {
		if err := env.Stop(); err != nil {
			r.logf("N=%d: %v", r.n, err)
		}
	}()
	kubeconfig, err := env.AddUser(r.target.User, []string{"system:masters"})
	if err != nil {
		return err
	}
	if err := CreateFleet(ctx, env, r.n, r.cfg.Resync, nil, r.fleet.Render); err != nil {
		return err
	}
	// The dry-runs go first: they store nothing, so the writes then find
	// the fleet as the add-on found it.
	var dryRunSeconds float64
	if len(dryRunReplays) > 0 {
		if dryRunSeconds, _, err = sendReplays(ctx, kubeconfig, dryRunReplays, workers, qps, burst); err != nil {
			return err
		}
	}
	seconds, unlimited, err := sendReplays(ctx, kubeconfig, replays, workers, qps, burst)
	if err != nil {
		return err
	}
	r.res.Floor = newFloor(r.res.ConvergenceSeconds, len(replays), seconds, len(dryRunReplays), dryRunSeconds)
	r.res.Floor.Workers, r.res.Floor.QPS, r.res.Floor.Burst, r.res.Floor.Unlimited = workers, qps, burst, unlimited
	return nil
}

// newFloor records the replays' times against the add-on's convergence.
func newFloor(convergence float64, writes int, seconds float64, dryRuns int, dryRunSeconds float64) *Floor {
	f := &Floor{Writes: writes, Seconds: seconds, DryRuns: dryRuns, DryRunSeconds: dryRunSeconds}
	if seconds > 0 {
		f.Ratio = convergence / seconds
		f.RequestRatio = convergence / (seconds + dryRunSeconds)
	}
	return f
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

// floorMeasured reports whether the run measures the write floor: the
// add-on's own run (not under the lockdown, whose writes are a tenant's),
// with BENCH_FLOOR on.
func (r *run) floorMeasured() bool {
	return r.cfg.Floor && !r.target.IsHelmController() && !r.target.Lockdown
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
