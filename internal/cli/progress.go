package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"golang.org/x/term"
)

// progress tells, on stderr, how far a fleet's run is: a bar rewritten in
// place on a terminal, a line per HelmRelease otherwise (a CI log). A nil
// progress tells nothing.
type progress struct {
	mu       sync.Mutex
	w        io.Writer
	terminal bool
	verb     string
	count    int
	total    int
}

// newProgress returns the progress of a run over total HelmReleases, or
// nil for one HelmRelease, whose output says enough.
func newProgress(w io.Writer, verb string, total int, fleet bool) *progress {
	if !fleet || total == 0 {
		return nil
	}
	f, ok := w.(*os.File)
	return &progress{w: w, terminal: ok && term.IsTerminal(int(f.Fd())), verb: verb, total: total}
}

// done counts a HelmRelease as done.
func (p *progress) done(hr *helmv2.HelmRelease, err error) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.count++
	if p.terminal {
		const width = 30
		n := width * p.count / p.total
		fmt.Fprintf(p.w, "\r%s [%s%s] %d/%d", p.verb, strings.Repeat("=", n), strings.Repeat(" ", width-n), p.count, p.total)
		if p.count == p.total {
			fmt.Fprintln(p.w)
		}
		return
	}
	status := "done"
	if err != nil {
		status = "error: " + err.Error()
	}
	fmt.Fprintf(p.w, "%s %d/%d %s/%s: %s\n", p.verb, p.count, p.total, hr.Namespace, hr.Name, status)
}
