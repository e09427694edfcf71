package testenv

import (
	"fmt"
	"os"
	"sync"
	"testing"
)

// Lazy is a control plane that a package's tests share: the first test
// that needs it starts it (unit tests and fuzzing never do), and Run stops
// it after the last test.
type Lazy struct {
	// Name and Options are those of StartWith.
	Name    string
	Options Options
	// Setup, when set, runs once after the start (users, fixtures).
	Setup func(*Env) error

	once sync.Once
	env  *Env
	err  error
}

// Env returns the control plane, starting it on first use; a start that
// failed fails every test that asks.
func (l *Lazy) Env(t testing.TB) *Env {
	t.Helper()
	l.once.Do(func() {
		if l.env, l.err = StartWith(l.Name, l.Options); l.err == nil && l.Setup != nil {
			l.err = l.Setup(l.env)
		}
	})
	if l.err != nil {
		t.Fatalf("failed to start the test control plane: %v", l.err)
	}
	return l.env
}

// Run runs the tests, then stops the control plane if one started, and
// returns the exit code for os.Exit: a failed stop fails the run.
func (l *Lazy) Run(m *testing.M) int {
	code := m.Run()
	if l.env != nil {
		if err := l.env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			if code == 0 {
				code = 1
			}
		}
	}
	return code
}
