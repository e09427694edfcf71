package testenv

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// RestartAPIServer stops kube-apiserver alone and starts it again on the
// same etcd, the same port and the same serving and client certificates, as
// a rolling restart of a control plane node does: every kubeconfig of the
// environment (the admin's, AddUser's) stays valid, so a controller run as a
// process reconnects on its own. envtest removes the API server's
// generated certificate folder when it stops, and a new one would mean a
// new serving CA; the folder is kept aside and put back under its name, and
// Stop removes it.
func (e *Env) RestartAPIServer() error {
	s := e.env.ControlPlane.APIServer
	dir := s.CertDir
	if dir == "" {
		return fmt.Errorf("failed to restart the API server of %q: it has no certificate folder", e.Name)
	}
	kept, err := os.MkdirTemp(filepath.Dir(dir), "tdc-apiserver-certs-")
	if err != nil {
		return fmt.Errorf("failed to keep the API server certificates of %q: %w", e.Name, err)
	}
	if err := copyFiles(dir, kept); err != nil {
		return fmt.Errorf("failed to keep the API server certificates of %q: %w", e.Name, err)
	}
	// envtest sends SIGTERM, and SIGKILL once StopTimeout has passed (it
	// then reports the timeout): a stop that took that long is a restart
	// all the same, once the process and its port are gone.
	stopTimeout := s.StopTimeout
	s.StopTimeout = restartStopTimeout
	err = s.Stop()
	s.StopTimeout = stopTimeout
	if err != nil && !strings.Contains(err.Error(), "timeout waiting for process") {
		return fmt.Errorf("failed to stop the API server of %q: %w", e.Name, err)
	}
	if err := waitPortFree(s.Address+":"+s.Port, restartStopTimeout); err != nil {
		return fmt.Errorf("failed to stop the API server of %q: %w", e.Name, err)
	}
	_ = os.RemoveAll(dir)
	if err := os.Rename(kept, dir); err != nil {
		return fmt.Errorf("failed to restore the API server certificates of %q: %w", e.Name, err)
	}
	// A folder set before Start is the caller's: envtest no longer removes
	// it, Stop does.
	s.CertDir = dir
	e.certDir = dir
	if err := s.Start(); err != nil {
		return fmt.Errorf("failed to start the API server of %q again: %w", e.Name, err)
	}
	return nil
}

// restartStopTimeout is how long RestartAPIServer waits for a graceful
// stop before SIGKILL, and then for the port to be released.
const restartStopTimeout = 10 * time.Second

// waitPortFree waits until nothing listens on addr.
func waitPortFree(addr string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err != nil {
			return nil
		}
		_ = c.Close()
		if time.Now().After(deadline) {
			return fmt.Errorf("%s still accepts connections %s after the stop", addr, timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// copyFiles copies the regular files of from into to (no subfolders: the
// API server's certificate folder has none).
func copyFiles(from, to string) error {
	entries, err := os.ReadDir(from)
	if err != nil {
		return err
	}
	for _, en := range entries {
		if !en.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(from, en.Name()))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(to, en.Name()), b, 0o600); err != nil {
			return err
		}
	}
	return nil
}
