package harness

import (
	"context"
	"fmt"
	"time"
)

// NamedDuration is a duration read from the environment variable Name into
// Into.
type NamedDuration struct {
	Name string
	Into *time.Duration
}

// ParseDurations reads each set variable of ds from getenv into its
// duration, which must be positive; example shows one in the error.
func ParseDurations(getenv func(string) string, example string, ds []NamedDuration) error {
	for _, d := range ds {
		v := getenv(d.Name)
		if v == "" {
			continue
		}
		parsed, err := time.ParseDuration(v)
		if err != nil || parsed <= 0 {
			return fmt.Errorf("failed to parse %s %q: want a positive duration such as %s", d.Name, v, example)
		}
		*d.Into = parsed
	}
	return nil
}

// Sleep waits d, or until ctx is done.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
