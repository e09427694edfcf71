package testenv

import (
	"fmt"
	"os"
	"path/filepath"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// AddUser adds a user authenticated by a client certificate, with name as
// its user name and groups as its groups, and writes a kubeconfig for it
// next to the admin's one (Stop removes both). Its requests carry its own
// name in the API server's audit log, so a benchmark can tell a
// controller's requests from its own. It returns the kubeconfig's path.
func (e *Env) AddUser(name string, groups []string) (string, error) {
	user, err := e.env.ControlPlane.AddUser(envtest.User{Name: name, Groups: groups}, nil)
	if err != nil {
		return "", fmt.Errorf("failed to add user %s to %q: %w", name, e.Name, err)
	}
	kc, err := user.KubeConfig()
	if err != nil {
		return "", fmt.Errorf("failed to render the kubeconfig of %s on %q: %w", name, e.Name, err)
	}
	path := filepath.Join(e.dir, "kubeconfig-"+name)
	if err := os.WriteFile(path, kc, 0o600); err != nil {
		return "", fmt.Errorf("failed to write the kubeconfig of %s on %q: %w", name, e.Name, err)
	}
	return path, nil
}
