package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
)

// versionPkg is the package whose variables -ldflags -X stamps, as the
// Makefile's LDFLAGS name it.
const versionPkg = "github.com/templatedrift/template-drift-controller/internal/version"

// TestParseFlagsCompat checks the Flux flags accepted for compatibility:
// helm-controller's feature gates and --no-cross-namespace-refs parse, and
// a gate helm-controller does not know is refused, as Flux refuses it.
func TestParseFlagsCompat(t *testing.T) {
	tests := []struct {
		// args are the command line.
		args []string
		// wantErr is a substring of the expected error, "" for none.
		wantErr string
		// wantNotices are substrings of the start-up notices, in order.
		wantNotices []string
	}{
		{args: nil},
		{
			args:        []string{"--feature-gates=OOMWatch=true,CacheSecretsAndConfigMaps=true,ObjectLevelWorkloadIdentity=false"},
			wantNotices: []string{"--feature-gates=CacheSecretsAndConfigMaps=true,OOMWatch=true,ObjectLevelWorkloadIdentity=false has no effect"},
		},
		{
			args:        []string{"--no-cross-namespace-refs"},
			wantNotices: []string{"--no-cross-namespace-refs has no effect"},
		},
		{
			args:        []string{"--no-cross-namespace-refs=true", "--feature-gates=UseHelm3Defaults=true"},
			wantNotices: []string{"--feature-gates=UseHelm3Defaults=true has no effect", "--no-cross-namespace-refs has no effect"},
		},
		{args: []string{"--no-cross-namespace-refs=false"}},
		{args: []string{"--feature-gates=NoSuchGate=true"}, wantErr: "feature-gate 'NoSuchGate' not supported"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			g := NewWithT(t)
			f, err := parseFlags(tt.args)
			if tt.wantErr != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tt.wantErr)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			notices := f.compat.notices()
			g.Expect(notices).To(HaveLen(len(tt.wantNotices)))
			for i, want := range tt.wantNotices {
				g.Expect(notices[i]).To(ContainSubstring(want))
			}
		})
	}
}

// TestBinaryVersionAndFluxFlags builds the binary with the version stamped
// as the Makefile stamps it, then runs it: --version prints what was
// stamped and exits 0, with the Flux compatibility flags too; a feature gate
// helm-controller does not know exits 2, as a bad flag does.
func TestBinaryVersionAndFluxFlags(t *testing.T) {
	g := NewWithT(t)
	bin := filepath.Join(t.TempDir(), "template-drift-controller")
	ldflags := "-X " + versionPkg + ".Version=1.2.3 -X " + versionPkg + ".Commit=0123abc -X " + versionPkg + ".Date=2026-12-02T10:00:00Z"
	out, err := exec.Command("go", "build", "-ldflags", ldflags, "-o", bin, ".").CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), "failed to build the controller:\n%s", out)

	for _, args := range [][]string{
		{"--version"},
		{"--feature-gates=OOMWatch=true,DisableChartDigestTracking=true", "--no-cross-namespace-refs", "--version"},
	} {
		out, code := runController(t, bin, args...)
		g.Expect(code).To(Equal(0), "%v; output:\n%s", args, out)
		g.Expect(out).To(HavePrefix("version: 1.2.3\ncommit: 0123abc\ndate: 2026-12-02T10:00:00Z\ngo: go"), "%v", args)
	}

	out2, code := runController(t, bin, "--feature-gates=NoSuchGate=true", "--version")
	g.Expect(code).To(Equal(2), "an unknown feature gate must exit 2; output:\n%s", out2)
	g.Expect(out2).To(ContainSubstring("feature-gate 'NoSuchGate' not supported"))
}
