// Package version holds what a build stamps into the binary: the release
// version, the commit and the commit's date. `make build`, `make image` and
// the Dockerfile set them with -ldflags -X (the Makefile's LDFLAGS); a plain
// `go build` keeps the defaults, so such a binary says it is not a release.
package version

import (
	"fmt"
	"io"
	"runtime"
)

// The variables -ldflags -X sets. The date is the commit's, not the build's,
// so that two builds of one commit are the same bytes.
var (
	// Version is the release version, the chart's appVersion. Its default
	// is the newest release's (a test in hack/release keeps them equal).
	Version = "0.2.0"
	// Commit is the git commit the binary was built from, with -dirty when
	// the work tree had changes.
	Commit = "unknown"
	// Date is the commit's date, RFC 3339 in UTC.
	Date = "unknown"
)

// Print writes the version, commit, date and Go toolchain, one `key: value`
// per line, for --version.
func Print(w io.Writer) error {
	_, err := fmt.Fprintf(w, "version: %s\ncommit: %s\ndate: %s\ngo: %s %s/%s\n",
		Version, Commit, Date, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return err
}
