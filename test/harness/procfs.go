package harness

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/<pid>/stat:
// 100 on every Linux architecture Go supports (reading sysconf would need
// cgo).
const clockTicks = 100

// CPUTime returns the CPU time pid has used so far, user and system, over
// all its threads.
func CPUTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, fmt.Errorf("failed to read the CPU time of %d: %w", pid, err)
	}
	return parseCPUTime(string(b))
}

// parseCPUTime reads utime and stime (fields 14 and 15) from a
// /proc/<pid>/stat line. The command name, field 2, can hold spaces and
// parentheses, so fields are counted from the last ')'.
func parseCPUTime(stat string) (time.Duration, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("failed to parse /proc stat %q", stat)
	}
	// After ')' come field 3 (state) onwards: utime is the 12th of them.
	f := strings.Fields(stat[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("failed to parse /proc stat %q: too few fields", stat)
	}
	var ticks int64
	for _, s := range f[11:13] {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("failed to parse /proc stat field %q: %w", s, err)
		}
		ticks += v
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}

// Memory is a process's resident memory, in bytes.
type Memory struct {
	// RSS is the resident set now (VmRSS).
	RSS int64 `json:"rssBytes"`
	// Peak is the largest resident set so far (VmHWM).
	Peak int64 `json:"peakRssBytes"`
}

// ReadMemory returns pid's resident memory from /proc/<pid>/status.
func ReadMemory(pid int) (Memory, error) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return Memory{}, fmt.Errorf("failed to read the memory of %d: %w", pid, err)
	}
	return parseMemory(string(b))
}

func parseMemory(status string) (Memory, error) {
	var m Memory
	var found int
	for _, line := range strings.Split(status, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || (k != "VmRSS" && k != "VmHWM") {
			continue
		}
		f := strings.Fields(v)
		if len(f) != 2 || f[1] != "kB" {
			return Memory{}, fmt.Errorf("failed to parse %q in /proc status", line)
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return Memory{}, fmt.Errorf("failed to parse %q in /proc status: %w", line, err)
		}
		if k == "VmRSS" {
			m.RSS = kb * 1024
		} else {
			m.Peak = kb * 1024
		}
		found++
	}
	if found != 2 {
		return Memory{}, fmt.Errorf("failed to find VmRSS and VmHWM in /proc status")
	}
	return m, nil
}

// ChildRunning returns the pid of the one child process of this process
// that runs the binary bin (envtest starts kube-apiserver and etcd as
// children of the process that calls it).
func ChildRunning(bin string) (int, error) {
	want, err := filepath.EvalSymlinks(bin)
	if err != nil {
		return 0, fmt.Errorf("failed to resolve %s: %w", bin, err)
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, fmt.Errorf("failed to list processes: %w", err)
	}
	var found []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		if err != nil || strings.TrimSuffix(exe, " (deleted)") != want {
			continue
		}
		if ppid, err := parentOf(pid); err == nil && ppid == os.Getpid() {
			found = append(found, pid)
		}
	}
	if len(found) != 1 {
		return 0, fmt.Errorf("failed to find the one child process running %s: found %v", bin, found)
	}
	return found[0], nil
}

// parentOf returns the parent pid of pid (field 4 of /proc/<pid>/stat).
func parentOf(pid int) (int, error) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("failed to parse /proc stat of %d", pid)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return 0, fmt.Errorf("failed to parse /proc stat of %d", pid)
	}
	return strconv.Atoi(f[1])
}
