package main

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/report"
)

// addonHandler serves what a replica that is not the leader serves: the
// add-on's metrics as internal/report registers them at start, before any
// pass, and nothing of controller-runtime's controller.
func addonHandler() http.Handler {
	reg := prometheus.NewRegistry()
	m := report.NewMetrics(reg)
	m.CountRollingOut(func() int { return 0 })
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
}

// TestCheckMetrics runs the check-metrics subcommand, the chart's helm test,
// against endpoints that serve the add-on's metrics, others' metrics, an
// error, nothing, or too late.
func TestCheckMetrics(t *testing.T) {
	reconciles := fmt.Sprintf("# TYPE controller_runtime_reconcile_total counter\n"+
		"controller_runtime_reconcile_total{controller=%q,result=\"success\"} 3\n", api.ControllerName)
	cases := []struct {
		// name describes the endpoint.
		name string
		// handler answers the scrape; nil is an address nothing listens on.
		handler http.Handler
		// args are the flags before the URL.
		args []string
		// wantCode is the exit code.
		wantCode int
		// wantOut is a substring of stdout, wantErr of stderr ("" for none).
		wantOut, wantErr string
	}{
		{name: "the add-on's metrics, as every replica serves them", handler: addonHandler(),
			wantCode: 0, wantOut: "serves 1 series of " + api.ControllerName},
		{name: "the leader's reconciles", handler: text(reconciles), wantCode: 0, wantOut: "serves 1 series"},
		{
			name: "another controller's reconciles",
			handler: text("# HELP controller_runtime_reconcile_total Total reconciliations.\n" +
				"controller_runtime_reconcile_total{controller=\"helmrelease\",result=\"success\"} 3\n" +
				"go_goroutines 42\n"),
			wantCode: 1, wantErr: "answered 200 OK without " + api.ControllerName + "'s metrics",
		},
		{name: "only comments naming the add-on's metrics", handler: text("# HELP templatedrift_rollouts_in_progress x\n"),
			wantCode: 1, wantErr: "no templatedrift_ series"},
		{name: "an empty answer", handler: text(""), wantCode: 1, wantErr: "answered 200 OK without"},
		{
			name:     "an error",
			handler:  http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "boom", http.StatusInternalServerError) }),
			wantCode: 1, wantErr: "answered 500 Internal Server Error, want 200 OK",
		},
		{name: "nothing listens", wantCode: 1, wantErr: "failed to GET: dial tcp"},
		{
			name: "no answer in time",
			handler: http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
				<-r.Context().Done()
			}),
			args:     []string{"--timeout=50ms"},
			wantCode: 1, wantErr: "failed to GET: context deadline exceeded",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			var target string
			if tc.handler == nil {
				srv := httptest.NewServer(http.NotFoundHandler())
				target = srv.URL + "/metrics"
				srv.Close()
			} else {
				srv := httptest.NewServer(tc.handler)
				t.Cleanup(srv.Close)
				target = srv.URL + "/metrics"
			}
			var stdout, stderr bytes.Buffer
			code := runCheckMetrics(append(tc.args, target), &stdout, &stderr)
			t.Logf("stdout: %s\nstderr: %s", stdout.String(), stderr.String())
			g.Expect(code).To(Equal(tc.wantCode))
			g.Expect(stdout.String()).To(ContainSubstring(tc.wantOut))
			if tc.wantErr == "" {
				g.Expect(stderr.String()).To(BeEmpty())
				return
			}
			g.Expect(stdout.String()).To(BeEmpty())
			g.Expect(stderr.String()).To(HavePrefix("check-metrics: "+target+": "), "names the URL")
			g.Expect(stderr.String()).To(ContainSubstring(tc.wantErr))
			g.Expect(strings.Count(stderr.String(), "\n")).To(Equal(1), "one line")
		})
	}
}

// TestCheckMetricsUsage: a missing or extra URL or a bad flag is a usage
// error (2), and --help is not an error.
func TestCheckMetricsUsage(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		wantCode int
	}{
		{args: nil, wantCode: 2},
		{args: []string{"http://a/metrics", "http://b/metrics"}, wantCode: 2},
		{args: []string{"--timeout=soon", "http://a/metrics"}, wantCode: 2},
		{args: []string{"--timeout=0s", "http://a/metrics"}, wantCode: 2},
		{args: []string{"--help"}, wantCode: 0},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			g := NewWithT(t)
			var stdout, stderr bytes.Buffer
			g.Expect(runCheckMetrics(tc.args, &stdout, &stderr)).To(Equal(tc.wantCode))
			g.Expect(stderr.String()).To(ContainSubstring("Usage: template-drift-controller check-metrics"))
		})
	}
}

// TestCheckMetricsPrefix: every metric internal/report serves starts with
// the prefix check-metrics looks for, so a renamed metric cannot make the
// helm test pass on another endpoint or fail on ours unnoticed.
func TestCheckMetricsPrefix(t *testing.T) {
	g := NewWithT(t)
	for _, name := range []string{report.DriftedTemplatesMetric, report.ConditionMetric, report.CorrectionsMetric,
		report.PrunedMetric, report.DurationMetric, report.AwaitingMetric, report.RollingOutMetric} {
		g.Expect(name).To(HavePrefix(addonSeriesPrefix))
	}
}

// text serves body as a Prometheus text exposition.
func text(body string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = w.Write([]byte(body))
	})
}
