package version

import (
	"bytes"
	"runtime"
	"testing"

	. "github.com/onsi/gomega"
)

// TestPrint checks the --version output: one `key: value` line per field, in
// a fixed order, with the values the build stamped.
func TestPrint(t *testing.T) {
	g := NewWithT(t)
	defer func(v, c, d string) { Version, Commit, Date = v, c, d }(Version, Commit, Date)
	Version, Commit, Date = "0.1.0", "0123abc", "2026-12-02T10:00:00Z"

	var out bytes.Buffer
	g.Expect(Print(&out)).To(Succeed())
	g.Expect(out.String()).To(Equal("version: 0.1.0\ncommit: 0123abc\ndate: 2026-12-02T10:00:00Z\n" +
		"go: " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + "\n"))
}
