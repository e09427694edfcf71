package testenv

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// reapOrphans kills kube-apiserver, etcd and manager processes started from these
// binaries whose test process died without stopping them (a panic in a test
// ends the test binary with os.Exit, skipping every cleanup). Such a process
// has been re-parented away from its test binary: its parent is no longer a
// live process that started it. Only processes running exactly the given
// binaries are considered, so nothing else on the machine is touched.
func reapOrphans(binaries ...string) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		if err != nil || !matches(exe, binaries) {
			continue
		}
		if orphaned(pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

func matches(exe string, binaries []string) bool {
	exe = strings.TrimSuffix(exe, " (deleted)")
	for _, b := range binaries {
		if resolved, err := filepath.EvalSymlinks(b); err == nil && resolved == exe {
			return true
		}
		if exe == b {
			return true
		}
	}
	return false
}

// orphaned reports whether pid's parent is not a process that could be its
// test: init (1), or a parent that is itself not a Go test binary or a
// program of this project (envtest starts the control plane directly from
// the test binary, so a live test parent is never init).
func orphaned(pid int) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	// The command name can hold spaces and parentheses; fields after it
	// start after the last ')'.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return false
	}
	fields := strings.Fields(s[i+1:])
	if len(fields) < 2 {
		return false
	}
	ppid, err := strconv.Atoi(fields[1])
	return err == nil && ppid == 1
}
