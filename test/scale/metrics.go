package scale

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// reconcileTotal is controller-runtime's counter of finished reconciles,
// labelled by controller and result.
const reconcileTotal = "controller_runtime_reconcile_total"

// Reconciles scrapes the controller's metrics endpoint at addr (host:port)
// and returns how many reconciles its controller named controller (the
// add-on's api.ControllerName, helm-controller's "helmrelease") finished,
// every result counted.
func Reconciles(addr, controller string) (float64, error) {
	text, err := scrapeMetrics(addr)
	if err != nil {
		return 0, err
	}
	return sumCounter(strings.NewReader(text), reconcileTotal, `controller="`+controller+`"`)
}

// scrapeMetrics returns the controller's metrics at addr (host:port), as
// Prometheus text.
func scrapeMetrics(addr string) (string, error) {
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get("http://" + addr + "/metrics")
	if err != nil {
		return "", fmt.Errorf("failed to scrape the controller's metrics: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("failed to scrape the controller's metrics: HTTP %d", resp.StatusCode)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", fmt.Errorf("failed to read the controller's metrics: %w", err)
	}
	return string(body), nil
}

// sumCounter adds up, in a Prometheus text exposition, the samples of
// metric whose labels include label (as `name="value"`).
func sumCounter(r io.Reader, metric, label string) (float64, error) {
	var sum float64
	var found bool
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, metric+"{")
		if !ok {
			continue
		}
		labels, value, ok := strings.Cut(rest, "} ")
		if !ok || !hasLabel(labels, label) {
			continue
		}
		// A sample may end with a timestamp.
		f := strings.Fields(value)
		if len(f) == 0 {
			return 0, fmt.Errorf("failed to parse metric line %q", line)
		}
		v, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			return 0, fmt.Errorf("failed to parse metric line %q: %w", line, err)
		}
		sum += v
		found = true
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	if !found {
		return 0, fmt.Errorf("failed to find %s{%s} in the controller's metrics", metric, label)
	}
	return sum, nil
}

func hasLabel(labels, label string) bool {
	for _, l := range strings.Split(labels, ",") {
		if strings.TrimSpace(l) == label {
			return true
		}
	}
	return false
}
