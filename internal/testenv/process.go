package testenv

import (
	"fmt"
	"net"
	"net/http"
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

// Kill sends SIGKILL to the process and its group, as the OOM killer or a
// lost node would: no graceful shutdown, no lease released, writes cut
// where they stand. It waits for the exit and is safe to call more than
// once.
func (p *Process) Kill() {
	if p == nil || p.cmd == nil {
		return
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.done //nolint:errcheck // killed on purpose: the exit status is an error by design
	p.cmd = nil
	_ = p.log.Close()
}

// PID returns the process id, or 0 once the process is stopped, so that a
// benchmark can read the process's CPU time and memory from /proc.
func (p *Process) PID() int {
	if p == nil || p.cmd == nil || p.cmd.Process == nil {
		return 0
	}
	return p.cmd.Process.Pid
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

// portAttempts bounds how often StartServing picks new ports for a process
// that exited before it was serving.
const portAttempts = 3

// StartServing runs a controller that listens on ports loopback addresses
// (args builds its flags from them; addrs[health] is its --health-addr) and
// waits until the health endpoint answers. FreeAddr's port is free when
// chosen but may be taken before the process binds it (another process of
// the suite does the same): a process that exits before serving is started
// again with new ports.
func StartServing(name, bin string, ports, health int, args func(addrs []string) []string, env []string, artifacts string) (*Process, error) {
	return startProbed(name, bin, ports, health, probe{path: "/healthz"}, args, env, artifacts)
}

// StartReady is StartServing for a controller-runtime manager whose
// /readyz turns 200 only once its webhook server listens (the Cluster API
// and Metal3 managers): it waits for that 200, not for any answer.
func StartReady(name, bin string, ports, health int, args func(addrs []string) []string, env []string, artifacts string) (*Process, error) {
	return startProbed(name, bin, ports, health, probe{path: "/readyz", wantOK: true}, args, env, artifacts)
}

// probe is where, and how strictly, a started process is asked whether it
// serves.
type probe struct {
	path string
	// wantOK requires HTTP 200; otherwise any answer counts.
	wantOK bool
}

func startProbed(name, bin string, ports, health int, pr probe, args func(addrs []string) []string, env []string, artifacts string) (*Process, error) {
	var lastErr error
	for attempt := 0; attempt < portAttempts; attempt++ {
		addrs := make([]string, ports)
		for i := range addrs {
			a, err := FreeAddr()
			if err != nil {
				return nil, err
			}
			addrs[i] = a
		}
		p, err := StartProcess(name, bin, args(addrs), env, artifacts)
		if err != nil {
			return nil, err
		}
		if lastErr = p.waitServing(addrs[health], pr, 90*time.Second); lastErr == nil {
			return p, nil
		}
		p.Stop()
	}
	return nil, fmt.Errorf("%s did not start serving after %d attempts: %w", name, portAttempts, lastErr)
}

// waitServing polls http://addr<pr.path> until it answers as pr wants, or
// the process exits.
func (p *Process) waitServing(addr string, pr probe, timeout time.Duration) error {
	c := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if p.Exited() {
			return fmt.Errorf("%s exited before serving (see %s)", p.Name, p.LogPath)
		}
		if resp, err := c.Get("http://" + addr + pr.path); err == nil {
			_ = resp.Body.Close()
			if !pr.wantOK || resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("%s did not answer on %s within %s", p.Name, addr, timeout)
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
