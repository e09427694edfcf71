package harness

import (
	"os"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

func TestParseCPUTime(t *testing.T) {
	g := NewWithT(t)
	// A command name with a space and a parenthesis; utime 250, stime 50.
	stat := "4242 (kube apiserver)) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 12 0 100 0 0"

	got, err := parseCPUTime(stat)

	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(Equal(3 * time.Second))
	_, err = parseCPUTime("4242 (short) S 1")
	g.Expect(err).To(HaveOccurred())
}

func TestParseMemory(t *testing.T) {
	g := NewWithT(t)
	status := "Name:\tmanager\nVmPeak:\t 900000 kB\nVmHWM:\t   81920 kB\nVmRSS:\t   61440 kB\nThreads:\t12\n"

	got, err := parseMemory(status)

	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(Equal(Memory{RSS: 60 << 20, Peak: 80 << 20}))
	_, err = parseMemory("Name:\tmanager\n")
	g.Expect(err).To(HaveOccurred())
}

func TestOwnProcess(t *testing.T) {
	g := NewWithT(t)

	cpu, err := CPUTime(os.Getpid())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cpu).To(BeNumerically(">=", 0))
	mem, err := ReadMemory(os.Getpid())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(mem.Peak).To(BeNumerically(">=", mem.RSS))
	ppid, err := parentOf(os.Getpid())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ppid).To(Equal(os.Getppid()))
}
