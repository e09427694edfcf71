package main

import (
	"bytes"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
)

// TestDeprecatedSubcommands checks that `template-drift-controller diff`
// and `preview` still run, as the templatedrift command's (internal/cli
// tests them against an API server), under the controller's name, after
// a one-line notice on stderr that names templatedrift.
func TestDeprecatedSubcommands(t *testing.T) {
	for _, command := range []string{"diff", "preview"} {
		t.Run(command, func(t *testing.T) {
			g := NewWithT(t)
			var out, errOut bytes.Buffer
			code := deprecatedCLI([]string{command, "--help"}, &out, &errOut)
			g.Expect(code).To(Equal(0), "help is not an error")
			g.Expect(strings.Count(errOut.String(), "\n")).To(Equal(1), "one line: %s", errOut.String())
			g.Expect(errOut.String()).To(ContainSubstring("`template-drift-controller " + command + "` is deprecated"))
			g.Expect(errOut.String()).To(ContainSubstring("use `templatedrift " + command + "`"))
			g.Expect(out.String()).To(ContainSubstring("template-drift-controller " + command + " [-n NAMESPACE]"))
			g.Expect(out.String()).To(ContainSubstring("--kubeconfig"))

			out.Reset()
			errOut.Reset()
			code = deprecatedCLI([]string{command, "--no-such-flag"}, &out, &errOut)
			g.Expect(code).To(Equal(2), "a bad flag is an error")
			g.Expect(errOut.String()).To(ContainSubstring("unknown flag: --no-such-flag"))
		})
	}
}
