package controllers_test

import (
	"fmt"

	"os"
	"testing"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/templatedrift/template-drift-controller/internal/testenv"
)

// env is the real control plane every integration test of this package
// shares; each test works in its own namespace.
var env *testenv.Env

func TestMain(m *testing.M) {
	// The controller's logs are not asserted on; keep them out of the output.
	ctrl.SetLogger(logr.Discard())
	var err error
	env, err = testenv.StartWith("controllers", testenv.Options{Managers: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("control plane %q: kube-apiserver %s, etcd %s at %s\n", env.Name, env.Paths.KubeVersion, env.Paths.EtcdVersion, env.Config.Host)
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(code)
}
