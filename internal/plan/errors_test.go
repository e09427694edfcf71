package plan

import (
	"errors"
	"fmt"
	"net/url"
	"syscall"
	"testing"

	. "github.com/onsi/gomega"
	"golang.org/x/net/http2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestClassifyError: one table for every stage that acts on an API error:
// the read retries (MayPass), the refusals that keep a raw diff or stop a
// recreate (IsRefusal), the storage reads retried with back-off
// (Facts.RecordStorageError) and the verdicts (ErrorVerdict).
func TestClassifyError(t *testing.T) {
	gr := schema.GroupResource{Resource: "metal3machinetemplates"}
	secrets := schema.GroupResource{Resource: "secrets"}
	reset := &url.Error{Op: "Get", URL: "https://127.0.0.1/apis", Err: http2.StreamError{StreamID: 7, Code: http2.ErrCodeInternal}}
	refused := &url.Error{Op: "Get", URL: "https://127.0.0.1:6443", Err: syscall.ECONNREFUSED}
	// wrapped is err as the release reader returns it, through Helm's driver.
	wrapped := func(err error) error {
		return fmt.Errorf("failed to get release Secret ns/sh.helm.release.v1.cluster.v1: %w",
			fmt.Errorf("get: failed to get %q: %w", "sh.helm.release.v1.cluster.v1", err))
	}
	cases := []struct {
		name string
		err  error
		want ErrorClass
		// refusal is IsRefusal; verdict the reason ErrorVerdict gives, "" for none.
		refusal bool
		verdict string
	}{
		{name: "no error", err: nil, want: ErrorNone},
		{name: "a 500", err: apierrors.NewInternalError(errors.New("boom")), want: ErrorMayPass},
		{name: "a 500, wrapped as storage reads are", err: wrapped(apierrors.NewInternalError(errors.New("boom"))), want: ErrorMayPass},
		{name: "a 429", err: apierrors.NewTooManyRequests("slow down", 1), want: ErrorMayPass},
		{name: "a 503", err: apierrors.NewServiceUnavailable("later"), want: ErrorMayPass},
		{name: "a 504", err: wrapped(apierrors.NewTimeoutError("timeout", 1)), want: ErrorMayPass},
		{name: "an HTTP/2 stream reset (the response lost)", err: reset, want: ErrorMayPass},
		{name: "a stream reset, wrapped", err: fmt.Errorf("failed to get x: %w", reset), want: ErrorMayPass},
		{name: "a refused connection", err: wrapped(refused), want: ErrorMayPass},
		{name: "a 405, no word about the object", err: apierrors.NewMethodNotSupported(gr, "patch"), want: ErrorMayPass},
		{name: "a 404", err: apierrors.NewNotFound(gr, "x"), want: ErrorNotFound},
		{name: "a 409", err: apierrors.NewConflict(gr, "x", errors.New("moved on")), want: ErrorConflict},
		{name: "a name taken", err: apierrors.NewAlreadyExists(gr, "x"), want: ErrorConflict},
		{name: "a 410", err: apierrors.NewResourceExpired("too old"), want: ErrorGone},
		{name: "a 403", err: apierrors.NewForbidden(gr, "x", errors.New("no")), want: ErrorForbidden, refusal: true, verdict: "AccessDenied"},
		{name: "a 403 on storage", err: wrapped(apierrors.NewForbidden(secrets, "x", errors.New("rbac"))), want: ErrorForbidden, refusal: true, verdict: "AccessDenied"},
		{name: "a 401", err: wrapped(apierrors.NewUnauthorized("who")), want: ErrorUnauthorized},
		{name: "a 422", err: apierrors.NewInvalid(schema.GroupKind{Kind: "X"}, "x", nil), want: ErrorRefused, refusal: true},
		{name: "a 400", err: apierrors.NewBadRequest("no"), want: ErrorRefused, refusal: true},
		{name: "the target unavailable", err: fmt.Errorf("kubeconfig: %w", ErrTargetUnavailable), want: ErrorOther, verdict: "ReleaseUnavailable"},
		{name: "invalid configuration", err: fmt.Errorf("bad: %w", ErrInvalidConfiguration), want: ErrorOther, verdict: "InvalidConfiguration"},
		{name: "anything else", err: errors.New("digest mismatch"), want: ErrorOther},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(ClassifyError(tc.err)).To(Equal(tc.want))
			g.Expect(MayPass(tc.err)).To(Equal(tc.want == ErrorMayPass))
			var f Facts
			g.Expect(f.RecordStorageError(tc.err)).To(sameErr(tc.want == ErrorMayPass, tc.err), "a storage read is retried with back-off only when it may pass")
			g.Expect(f.ReleaseErr != nil || f.ConfigErr != nil).To(Equal(tc.err != nil && tc.want != ErrorMayPass), "anything else is a fact about the release")
			g.Expect(IsRefusal(tc.err)).To(Equal(tc.refusal))
			if tc.err != nil {
				why, retry := UnconfirmedDrift(tc.err)
				g.Expect(retry).To(Equal(!tc.refusal), "only a refusal keeps the raw diff")
				if tc.refusal {
					g.Expect(why).To(Equal(tc.err.Error()))
				}
			}
			v, ok := ErrorVerdict(tc.err)
			g.Expect(ok).To(Equal(tc.verdict != ""))
			g.Expect(v.Reason).To(Equal(tc.verdict))
		})
	}
}

// sameErr matches err itself when fails, else nil.
func sameErr(fails bool, err error) OmegaMatcher {
	if fails {
		return BeIdenticalTo(err)
	}
	return BeNil()
}
