package framework

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// Process is a binary run as a child process, its output in a log file of
// the artifacts folder so a failing spec can print it.
type Process struct {
	Name    string
	LogPath string
	cmd     *exec.Cmd
	done    chan error
	log     *os.File
}

// StartProcess runs bin with args and extra environment variables.
func StartProcess(name, bin string, args, env []string, artifacts string) (*Process, error) {
	if err := os.MkdirAll(artifacts, 0o755); err != nil {
		return nil, err
	}
	logPath := filepath.Join(artifacts, name+".log")
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("failed to start %s: %w", name, err)
	}
	p := &Process{Name: name, LogPath: logPath, cmd: cmd, done: make(chan error, 1), log: f}
	go func() { p.done <- cmd.Wait() }()
	return p, nil
}

// Stop sends SIGTERM, waits up to 15 s for a graceful exit, then kills.
// It is safe to call more than once.
func (p *Process) Stop() {
	if p == nil || p.cmd == nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	// The exit status is dropped: after SIGTERM or SIGKILL it is an error by
	// design, and Logs has what the process said.
	select {
	case <-p.done: //nolint:errcheck // see above
	case <-time.After(15 * time.Second):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done //nolint:errcheck // see above
	}
	p.cmd = nil
	_ = p.log.Close()
}

// Exited reports whether the process ended on its own.
func (p *Process) Exited() bool {
	select {
	case err := <-p.done:
		p.done <- err
		return true
	default:
		return false
	}
}

// Logs returns the process output so far.
func (p *Process) Logs() string {
	b, _ := os.ReadFile(p.LogPath)
	return string(b)
}

// FreeAddr returns a free 127.0.0.1:port.
func FreeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}
