package plan

import (
	"errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/manifest"
)

// ErrTargetUnavailable wraps a failure to reach the cluster a HelmRelease
// deploys to (a kubeconfig Secret that is missing or does not parse, a
// client that cannot be built). The pass waits for the user to fix it.
var ErrTargetUnavailable = errors.New("target cluster unavailable")

// RecordStorageError files an error met while reading Helm storage: the
// list of the release's versions, or the stored release itself. A failure
// that may pass (MayPass: a 5xx, a 429, a timeout) says nothing about the
// release: it is returned, so the pass fails and is retried with back-off
// rather than wait for the resync as for a missing release. Anything else
// is a fact about the release, filed for the gates, and nil is returned: a
// reference into another namespace is the user's configuration; not
// found, corrupt, too large, not the one status.history names, not the
// identity's to read (403, 401) or refused makes the release unusable.
func (f *Facts) RecordStorageError(err error) error {
	switch {
	case err == nil:
		return nil
	case MayPass(err):
		return err
	case errors.Is(err, manifest.ErrCrossNamespaceRef):
		f.ConfigErr = err
	default:
		f.ReleaseErr = err
	}
	return nil
}

// ErrorVerdict maps an error that stopped a pass after the gates to the
// verdict it deserves. The second result is false for every other error:
// those are not the release's or the user's fault, so the pass fails and
// is retried with the rate limiter's back-off.
func ErrorVerdict(err error) (Verdict, bool) {
	switch {
	case errors.Is(err, ErrInvalidConfiguration), errors.Is(err, manifest.ErrCrossNamespaceRef):
		return Verdict{Status: metav1.ConditionFalse, Reason: api.InvalidConfigurationReason, Message: err.Error()}, true
	case errors.Is(err, ErrTargetUnavailable):
		return Verdict{Status: metav1.ConditionUnknown, Reason: api.ReleaseUnavailableReason, Message: err.Error()}, true
	case ClassifyError(err) == ErrorForbidden:
		// The identity's rights, not a fault to retry with back-off: say
		// so, write nothing, look again later.
		return Verdict{Status: metav1.ConditionFalse, Reason: api.AccessDeniedReason, Message: err.Error()}, true
	}
	return Verdict{}, false
}
