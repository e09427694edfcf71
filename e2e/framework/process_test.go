package framework

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
)

// helperEnv makes the test binary act as a controller process: it serves
// /healthz on the address after --health-addr=, unless the marker file named
// by helperFailOnce does not exist yet, in which case it creates it and
// exits at once (as a controller whose port was taken does).
const (
	helperEnv      = "TDC_FRAMEWORK_HELPER"
	helperFailOnce = "TDC_FRAMEWORK_FAIL_ONCE"
)

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "" {
		os.Exit(m.Run())
	}
	if marker := os.Getenv(helperFailOnce); marker != "" {
		if _, err := os.Stat(marker); err != nil {
			_ = os.WriteFile(marker, nil, 0o644)
			os.Exit(1)
		}
	}
	for _, a := range os.Args[1:] {
		if addr, ok := strings.CutPrefix(a, "--health-addr="); ok {
			http.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
			_ = http.ListenAndServe(addr, nil)
		}
	}
	os.Exit(2)
}

func healthArgs(a []string) []string { return []string{"--health-addr=" + a[0]} }

// TestStartServingRetriesAProcessThatExitsEarly: a process that exits before
// it serves (its port was taken between FreeAddr and its bind) is started
// again with new ports, and StartServing returns once it answers.
func TestStartServingRetriesAProcessThatExitsEarly(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	marker := filepath.Join(dir, "failed-once")
	env := []string{helperEnv + "=1", helperFailOnce + "=" + marker}
	p, err := StartServing("helper", os.Args[0], 1, 0, healthArgs, env, dir)
	g.Expect(err).NotTo(HaveOccurred())
	defer p.Stop()
	g.Expect(marker).To(BeAnExistingFile(), "the first attempt exited")
	g.Expect(p.Exited()).To(BeFalse(), "the second attempt serves")
}

// TestStartServingGivesUp: a process that never serves is tried a bounded
// number of times, and the error names it.
func TestStartServingGivesUp(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	env := []string{helperEnv + "=1"}
	_, err := StartServing("never", os.Args[0], 1, 0, func([]string) []string { return nil }, env, dir)
	g.Expect(err).To(MatchError(ContainSubstring("never did not start serving after 3 attempts")))
}
