package chaos

import (
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"testing"

	. "github.com/onsi/gomega"
)

// keep holds what the test allocates until the profile is written.
var keep [][]byte

func TestProfiledLiveBytes(t *testing.T) {
	g := NewWithT(t)
	old := runtime.MemProfileRate
	runtime.MemProfileRate = 1
	defer func() { runtime.MemProfileRate = old; keep = nil }()
	for range 64 {
		keep = append(keep, make([]byte, 64<<10))
	}
	runtime.GC()
	path := filepath.Join(t.TempDir(), "heap.pb.gz")
	f, err := os.Create(path)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(pprof.Lookup("heap").WriteTo(f, 0)).To(Succeed())
	g.Expect(f.Close()).To(Succeed())

	n, err := ProfiledLiveBytes(path)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(n).To(BeNumerically(">=", 64*64<<10), "the 4 MiB kept are live")

	g.Expect(os.WriteFile(path, []byte("not a profile"), 0o644)).To(Succeed())
	_, err = ProfiledLiveBytes(path)
	g.Expect(err).To(MatchError(ContainSubstring("failed to parse the heap profile")))
}
