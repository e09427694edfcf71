package doctable

import (
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
)

// TestConstants: string literals, constants of the file and their sums are
// read, in any order of declaration; other constants are left out.
func TestConstants(t *testing.T) {
	g := NewWithT(t)
	path := filepath.Join(t.TempDir(), "api.go")
	g.Expect(os.WriteFile(path, []byte(`package api

const (
	DerivedEvent = Prefix + (AReason + "!")
	Prefix       = "Template"
	AReason      = "A"
	Alias        = AReason
	Number       = 3
	Typed        = time.Second
	Mixed        = Prefix + Typed
)

var NotAConstant = "x"
`), 0o600)).To(Succeed())
	got, err := Constants(path)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(Equal(map[string]string{"DerivedEvent": "TemplateA!", "Prefix": "Template", "AReason": "A", "Alias": "A"}))

	g.Expect(os.WriteFile(path, []byte("package api\n\nconst (\n\tA = B + \"x\"\n\tB = A\n)\n"), 0o600)).To(Succeed())
	_, err = Constants(path)
	g.Expect(err).To(MatchError(ContainSubstring("refers to itself")))
}
