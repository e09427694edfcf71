package diff

import (
	"errors"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Op is the kind of correction a change needs. Its values are the RFC 6902
// operation names, so a Change maps one-to-one onto a JSON patch operation.
type Op string

const (
	// OpAdd means the manifest sets a field that is absent live. It is only
	// reported where the live parent exists, so the patch "add" always applies.
	OpAdd Op = "add"
	// OpReplace means the field differs live and must be overwritten.
	OpReplace Op = "replace"
	// OpRemove means the field was set by the previous deployed release, is gone
	// from this one, and is still live: Helm would have removed it on upgrade.
	OpRemove Op = "remove"
)

// Change is one drifted field, the unit reported in conditions and events and
// the unit a JSON patch is built from.
//
// Before and After may share memory with the objects passed to Object; treat
// them as read-only.
type Change struct {
	// Path is the RFC 6901 JSON pointer of the field, e.g.
	// "/spec/template/spec/image/url" ("~" escaped as "~0", "/" as "~1").
	Path string
	// Op is the correction the field needs.
	Op Op
	// Before is the live value (nil when absent).
	Before any
	// After is the desired value (nil for OpRemove).
	After any
}

// Options tune a comparison. The zero value compares spec with no previous
// release and no ignore rules.
type Options struct {
	// Previous is the same object as rendered by the previous deployed release,
	// or nil. It enables OpRemove: fields the previous release set, the current
	// one does not, and that are still live.
	Previous *unstructured.Unstructured
	// IgnorePaths are JSON pointers removed from desired, live and previous
	// before comparing, as helm-controller's jsondiff does (see Ignorer). A
	// pointer that does not resolve, or is malformed, is skipped; "" (the whole
	// document) excludes the object, so Object reports nothing.
	IgnorePaths []string
	// Roots are the top-level fields compared; empty means DefaultRoots.
	// "metadata" and "status" are never compared even when listed: metadata is
	// owned by the API server and Helm, status by the provider's controller.
	Roots []string
}

// DefaultRoots returns the top-level fields compared when Options.Roots is
// empty: only "spec", the part of an infrastructure template Helm owns. It is
// a function so that no caller can change the default for everybody.
func DefaultRoots() []string { return []string{"spec"} }

// ErrInvalidChange is wrapped by Patch and Apply when a Change has an unknown
// Op or a malformed Path, so callers can tell a programming error from a
// patch that no longer applies.
var ErrInvalidChange = errors.New("invalid change")
