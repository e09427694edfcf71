package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	. "github.com/onsi/gomega"
)

// versionPkg is the package whose variables the builds stamp.
const versionPkg = "github.com/templatedrift/template-drift-controller/internal/version"

// TestDockerfileMatchesMakefile keeps the daemon build in step with `make
// image`: the Dockerfile cross-compiles on the build platform, stamps the
// same variables with the same -ldflags as the Makefile's LDFLAGS, and runs
// the binary at the same path as the same user.
func TestDockerfileMatchesMakefile(t *testing.T) {
	g := NewWithT(t)
	read := func(name string) string {
		data, err := os.ReadFile(filepath.Join("..", "..", name))
		g.Expect(err).NotTo(HaveOccurred())
		return string(data)
	}
	makefile, dockerfile := read("Makefile"), read("Dockerfile")

	g.Expect(makefile).To(MatchRegexp(`(?m)^VERSION_PKG := ` + regexp.QuoteMeta(versionPkg) + `$`))
	g.Expect(makefile).To(MatchRegexp(`(?m)^LDFLAGS \?= -s -w -X \$\(VERSION_PKG\)\.Version=\$\(VERSION\) -X \$\(VERSION_PKG\)\.Commit=\$\(COMMIT\) -X \$\(VERSION_PKG\)\.Date=\$\(DATE\)$`))
	g.Expect(makefile).To(MatchRegexp(`(?m)^GO_BUILD_FLAGS \?= -trimpath -buildvcs=false -ldflags "\$\(LDFLAGS\)"$`))

	g.Expect(dockerfile).To(MatchRegexp(`(?m)^FROM --platform=\$BUILDPLATFORM golang:`))
	g.Expect(dockerfile).To(ContainSubstring("CGO_ENABLED=0 GOOS=${TARGETOS} GOARCH=${TARGETARCH} go build -trimpath -buildvcs=false"))
	ldflags := fmt.Sprintf(`-ldflags="-s -w -X %[1]s.Version=${VERSION} -X %[1]s.Commit=${COMMIT} -X %[1]s.Date=${DATE}"`, versionPkg)
	g.Expect(dockerfile).To(ContainSubstring(ldflags))
	g.Expect(dockerfile).To(MatchRegexp(`(?m)^USER ` + imageUser + `$`))
	g.Expect(dockerfile).To(MatchRegexp(`(?m)^ENTRYPOINT \["` + binaryPath + `"\]$`))
	g.Expect(dockerfile).To(ContainSubstring("/out/template-drift-controller " + binaryPath))
}
