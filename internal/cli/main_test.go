package cli

import (
	"fmt"
	"os"
	"testing"

	"github.com/templatedrift/template-drift-controller/internal/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	var err error
	if env, err = testenv.StartWith("cli", testenv.Options{Managers: true}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	_ = env.Stop()
	os.Exit(code)
}
