package plan

import (
	"errors"
	"net/url"

	"golang.org/x/net/http2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilnet "k8s.io/apimachinery/pkg/util/net"
)

// ErrorClass is what an error from the API server, or from the way to it,
// says: the one classification every stage acts on, so that a retry, a
// refusal and a verdict never disagree about the same status code.
type ErrorClass string

const (
	// ErrorNone is the class of a nil error.
	ErrorNone ErrorClass = ""
	// ErrorMayPass is a failure to answer that may pass on its own: an
	// error on the server (5xx), throttling (429), a timeout, a lost
	// connection or stream (an HTTP/2 stream reset: the response lost on
	// its way back), a transport failure, or any other status the server
	// gives without a word about the object.
	ErrorMayPass ErrorClass = "MayPass"
	// ErrorRefused is the server's answer about the object: invalid (422)
	// or a bad request (400). Asking again gets the same answer.
	ErrorRefused ErrorClass = "Refused"
	// ErrorForbidden is a 403: the identity's rights, or an admission
	// webhook or policy that denies the object.
	ErrorForbidden ErrorClass = "Forbidden"
	// ErrorUnauthorized is a 401: the credentials are not accepted.
	ErrorUnauthorized ErrorClass = "Unauthorized"
	// ErrorNotFound is a 404.
	ErrorNotFound ErrorClass = "NotFound"
	// ErrorConflict is a 409: a precondition or resourceVersion that no
	// longer holds, or a name that is taken.
	ErrorConflict ErrorClass = "Conflict"
	// ErrorGone is a 410: a list or watch too old for the server's history.
	ErrorGone ErrorClass = "Gone"
	// ErrorOther is any other error: not from the server nor the way to it
	// (a corrupt release, a manifest that does not parse).
	ErrorOther ErrorClass = "Other"
)

// ClassifyError returns the class of err, looking through wrapping.
func ClassifyError(err error) ErrorClass {
	var status apierrors.APIStatus
	var stream http2.StreamError
	var transport *url.Error
	switch {
	case err == nil:
		return ErrorNone
	case apierrors.IsNotFound(err):
		return ErrorNotFound
	case apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err):
		return ErrorConflict
	case apierrors.IsGone(err) || apierrors.IsResourceExpired(err):
		return ErrorGone
	case apierrors.IsForbidden(err):
		return ErrorForbidden
	case apierrors.IsUnauthorized(err):
		return ErrorUnauthorized
	case apierrors.IsInvalid(err) || apierrors.IsBadRequest(err):
		return ErrorRefused
	case errors.As(err, &status), errors.As(err, &stream), errors.As(err, &transport),
		utilnet.IsConnectionRefused(err), utilnet.IsConnectionReset(err), utilnet.IsProbableEOF(err):
		return ErrorMayPass
	}
	return ErrorOther
}

// MayPass reports whether err may pass on its own, so that reading again
// (a few times, shortly after) or retrying the pass with back-off is worth
// it.
func MayPass(err error) bool { return ClassifyError(err) == ErrorMayPass }

// IsRefusal reports whether err is the server's answer about the object
// itself (invalid, a bad request, denied by admission or by the
// identity's rights), as opposed to a failure to answer, which says
// nothing about the object and is worth a retry.
func IsRefusal(err error) bool {
	switch ClassifyError(err) {
	case ErrorRefused, ErrorForbidden:
		return true
	}
	return false
}

// UnconfirmedDrift decides what a pass does when the server does not give
// its view of the manifest's object (the dry-run create that confirms
// drift failed): a refusal, an answer about the object itself, keeps the
// raw changes, unconfirmed, with the server's words as why; any other
// failure says nothing about the object, so the pass is retried rather
// than act on a raw diff that conversion alone may explain.
func UnconfirmedDrift(err error) (why string, retry bool) {
	if IsRefusal(err) {
		return err.Error(), false
	}
	return "", true
}
