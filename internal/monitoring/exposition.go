package monitoring

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Exposed maps each series name of a Prometheus text exposition to the
// label names its series carry (the union over its series).
type Exposed map[string]map[string]bool

// ParseExposition reads a Prometheus text exposition (what /metrics
// serves). Histograms appear as their _bucket (with le), _sum and _count
// series, as Prometheus stores them.
func ParseExposition(r io.Reader) (Exposed, error) {
	out := Exposed{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		name, labels, err := parseSample(line)
		if err != nil {
			return nil, err
		}
		if out[name] == nil {
			out[name] = map[string]bool{}
		}
		for _, l := range labels {
			out[name][l] = true
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("failed to read the exposition: %w", err)
	}
	return out, nil
}

// parseSample returns the series name and label names of one sample line.
func parseSample(line string) (string, []string, error) {
	i := strings.IndexAny(line, "{ ")
	if i <= 0 {
		return "", nil, fmt.Errorf("failed to parse sample %q", line)
	}
	name := line[:i]
	if line[i] != '{' {
		return name, nil, nil
	}
	var labels []string
	s := line[i+1:]
	for {
		s = strings.TrimLeft(s, " ,")
		if strings.HasPrefix(s, "}") {
			return name, labels, nil
		}
		eq := strings.Index(s, `="`)
		if eq <= 0 {
			return "", nil, fmt.Errorf("failed to parse sample %q", line)
		}
		labels = append(labels, s[:eq])
		// Skip the quoted value, escapes included.
		j := eq + 2
		for ; j < len(s) && s[j] != '"'; j++ {
			if s[j] == '\\' {
				j++
			}
		}
		if j >= len(s) {
			return "", nil, fmt.Errorf("failed to parse sample %q", line)
		}
		s = s[j+1:]
	}
}

// Check returns what the queries use that exposed does not serve: a metric
// it does not expose, a label matched on that none of its series has, or a
// grouping label missing from one of the expression's selectors. Only
// metrics that keep returns true for are checked; series Prometheus
// writes itself (ScrapeGenerated) carry only target labels. An error is a
// query that does not parse.
func Check(queries []Query, exposed Exposed, keep func(metric string) bool) ([]string, error) {
	problems := map[string]bool{}
	has := func(metric, label string) bool {
		l, exposedLabel := ExposedLabel(label)
		if !exposedLabel {
			return true
		}
		return !ScrapeGenerated[metric] && exposed[metric][l]
	}
	for _, q := range queries {
		u, err := Parse(q.Expr)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", q.Source, err)
		}
		for _, s := range u.Selectors {
			if !keep(s.Metric) {
				continue
			}
			if _, ok := exposed[s.Metric]; !ok && !ScrapeGenerated[s.Metric] {
				problems[fmt.Sprintf("%s: metric %s is not exposed", q.Source, s.Metric)] = true
				continue
			}
			for _, m := range s.Matchers {
				if !has(s.Metric, m.Label) {
					problems[fmt.Sprintf("%s: %s has no label %s", q.Source, s.Metric, m.Label)] = true
				}
			}
			for _, l := range s.Grouping {
				if !has(s.Metric, l) {
					problems[fmt.Sprintf("%s: %s has no label %s to group by", q.Source, s.Metric, l)] = true
				}
			}
		}
	}
	out := make([]string, 0, len(problems))
	for p := range problems {
		out = append(out, p)
	}
	sort.Strings(out)
	return out, nil
}
