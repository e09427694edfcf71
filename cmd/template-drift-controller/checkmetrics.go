package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	flag "github.com/spf13/pflag"

	"github.com/templatedrift/template-drift-controller/api"
)

const checkMetricsUsage = `Usage: template-drift-controller check-metrics [--timeout DURATION] URL

Scrapes the metrics endpoint at URL once and checks that it answers 200 with
the add-on's own metrics: a templatedrift_ series (every replica serves
templatedrift_rollouts_in_progress from its start, leader or not) or
controller-runtime's controller_runtime_reconcile_total of the controller
(the leader's). The chart's ` + "`helm test`" + ` Pod runs it against the metrics
Service, since the image has no shell and no curl. Exit code: 0 when the
metrics are served, 1 when they are not, 2 on a usage error.
`

// addonSeriesPrefix begins the name of every metric the add-on serves
// itself (internal/report's).
const addonSeriesPrefix = "templatedrift_"

// reconcileTotalMetric is controller-runtime's count of reconciles, which
// the leader serves with the label controller="<api.ControllerName>".
const reconcileTotalMetric = "controller_runtime_reconcile_total"

// maxMetricsLine bounds one line of the answer: a series with its labels
// is far shorter.
const maxMetricsLine = 1 << 20

// errNoAddonMetrics is a 200 answer without any of the add-on's series:
// the URL reaches some other metrics endpoint.
var errNoAddonMetrics = fmt.Errorf("answered 200 OK without %s's metrics (no %s series, no %s{controller=%q})",
	api.ControllerName, addonSeriesPrefix, reconcileTotalMetric, api.ControllerName)

// runCheckMetrics is the `check-metrics` subcommand; it returns the process
// exit code.
func runCheckMetrics(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("check-metrics", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, checkMetricsUsage); fs.PrintDefaults() }
	timeout := fs.Duration("timeout", 10*time.Second, "How long the request may take, reading the answer included.")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0 // asked for help: not an error, as the controller's --help
		}
		// pflag prints nothing of an error under ContinueOnError.
		fmt.Fprintf(stderr, "check-metrics: %v\n", err)
		fs.Usage()
		return 2
	}
	if fs.NArg() != 1 || *timeout <= 0 {
		fs.Usage()
		return 2
	}
	target := fs.Arg(0)
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	n, err := checkMetrics(ctx, http.DefaultClient, target)
	if err != nil {
		fmt.Fprintf(stderr, "check-metrics: %s: %v\n", target, err)
		return 1
	}
	fmt.Fprintf(stdout, "check-metrics: %s: serves %d series of %s\n", target, n, api.ControllerName)
	return 0
}

// checkMetrics GETs target and returns how many of the add-on's series the
// answer holds, or why it is not the add-on's metrics endpoint.
func checkMetrics(ctx context.Context, c *http.Client, target string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return 0, fmt.Errorf("failed to build the request: %w", err)
	}
	// The text format, one series a line, whatever the server prefers.
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	resp, err := c.Do(req)
	if err != nil {
		// url.Error repeats the method and the URL the message already names.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return 0, fmt.Errorf("failed to GET: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("answered %s, want 200 OK", resp.Status)
	}
	n, err := countAddonSeries(resp.Body)
	if err != nil {
		return 0, fmt.Errorf("failed to read the answer: %w", err)
	}
	if n == 0 {
		return 0, errNoAddonMetrics
	}
	return n, nil
}

// countAddonSeries counts the samples of the add-on's metrics in a text
// exposition.
func countAddonSeries(r io.Reader) (int, error) {
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 0, 64<<10), maxMetricsLine)
	n := 0
	for s.Scan() {
		if isAddonSeries(s.Text()) {
			n++
		}
	}
	return n, s.Err()
}

// isAddonSeries tells whether a line of a text exposition is a sample of
// the add-on's metrics (comments are not).
func isAddonSeries(line string) bool {
	if strings.HasPrefix(line, addonSeriesPrefix) {
		return true
	}
	labels, ok := strings.CutPrefix(line, reconcileTotalMetric+"{")
	return ok && strings.Contains(labels, fmt.Sprintf("controller=%q", api.ControllerName))
}
