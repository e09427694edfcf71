package chart_test

import (
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/templatedrift/template-drift-controller/internal/testenv"
)

// The control plane is started by the first test that needs it and shared
// by the others, so the render-only tests run without one.
var (
	envOnce sync.Once
	env     *testenv.Env
	envErr  error
)

// sharedEnv returns the package's control plane, starting it on first use.
func sharedEnv(t testing.TB) *testenv.Env {
	t.Helper()
	envOnce.Do(func() {
		env, envErr = testenv.StartWith("chart", testenv.Options{Managers: true})
		if envErr == nil {
			fmt.Printf("control plane %q: kube-apiserver %s, etcd %s at %s\n", env.Name, env.Paths.KubeVersion, env.Paths.EtcdVersion, env.Config.Host)
		}
	})
	if envErr != nil {
		t.Fatal(envErr)
	}
	return env
}

func TestMain(m *testing.M) {
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(code)
}
