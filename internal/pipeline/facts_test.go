package pipeline

import (
	"errors"
	"fmt"
	"net/url"
	"syscall"
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/templatedrift/template-drift-controller/internal/release"
)

func TestStorageUnreadable(t *testing.T) {
	secrets := schema.GroupResource{Resource: "secrets"}
	// wrapped is err as the release reader returns it, through Helm's driver.
	wrapped := func(err error) error {
		return fmt.Errorf("failed to get release Secret ns/sh.helm.release.v1.cluster.v1: %w",
			fmt.Errorf("get: failed to get %q: %w", "sh.helm.release.v1.cluster.v1", err))
	}
	tests := []struct {
		name string
		// err is what reading the release returned.
		err error
		// want is true for a failure the pass retries with back-off.
		want bool
	}{
		{name: "no error", err: nil},
		{name: "an error on the server", err: wrapped(apierrors.NewInternalError(errors.New("boom"))), want: true},
		{name: "throttled", err: wrapped(apierrors.NewTooManyRequests("slow down", 1)), want: true},
		{name: "a timeout", err: wrapped(apierrors.NewTimeoutError("timeout", 1)), want: true},
		{name: "a lost connection", err: wrapped(&url.Error{Op: "Get", URL: "https://127.0.0.1:6443", Err: syscall.ECONNREFUSED}), want: true},
		{name: "not found", err: fmt.Errorf("failed to get release Secret: %w: %w", release.ErrReleaseNotFound, apierrors.NewNotFound(secrets, "x"))},
		{name: "not ours to read", err: wrapped(apierrors.NewForbidden(secrets, "x", errors.New("rbac")))},
		{name: "unauthorized", err: wrapped(apierrors.NewUnauthorized("who"))},
		{name: "corrupt", err: fmt.Errorf("failed to decode: %w", release.ErrReleaseCorrupt)},
		{name: "not the release status.history names", err: errors.New("digest mismatch")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(storageUnreadable(tt.err)).To(Equal(tt.want))
		})
	}
}
