package plan

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/diff"
)

// driftDigestLen is the number of hex digits of a drift digest: short in an
// annotation, and a collision between two differences of one template is
// harmless (it reports a failure; a new release or a new drift clears it).
const driftDigestLen = 12

// DriftDigest is the digest recorded in api.CorrectedDriftAnnotation when a
// correction is written: 12 hex digits of the sha256 of the changes. Each
// change contributes its path, op, live value and desired value, so the
// digest names one difference from one state: a template that drifts again
// to another value after a correction gets a new digest and is corrected
// again. The encoding is canonical: changes are sorted, map keys are
// sorted by encoding/json, and numbers are encoded by value (a YAML 1 and a
// JSON 1.0 give the same digest). It is "" for no changes.
func DriftDigest(changes []diff.Change) string {
	if len(changes) == 0 {
		return ""
	}
	entries := make([]string, 0, len(changes))
	for _, ch := range changes {
		entries = append(entries, digestEntry(ch))
	}
	slices.Sort(entries)
	sum := sha256.Sum256([]byte(strings.Join(entries, "\n")))
	return hex.EncodeToString(sum[:])[:driftDigestLen]
}

// digestEntry encodes one change as one line of JSON. Values that JSON
// cannot encode (a YAML .nan) fall back to Go's formatting, which is as
// stable.
func digestEntry(ch diff.Change) string {
	raw, err := json.Marshal([]any{ch.Path, string(ch.Op), ch.Before, ch.After})
	if err != nil {
		return fmt.Sprintf("%q %q %v %v", ch.Path, ch.Op, ch.Before, ch.After)
	}
	return string(raw)
}

// repeatedCorrection reports, with a message, whether the live template
// records a correction for this release of exactly the difference it shows
// now. The correction was written and the difference came back: the server
// (a conversion, a webhook, another controller) does not keep the value,
// and writing it again would repeat on every pass. The message is the same
// on every pass, so the condition and events do not churn. The same
// difference brought back later by someone else (a restore of the old
// object) looks the same, so the message names the way to allow one more
// correction.
func repeatedCorrection(live *unstructured.Unstructured, release string, changes []diff.Change) (string, bool) {
	s, ok := recordedCorrection(live, release)
	digest := DriftDigest(changes)
	if !ok || digest == "" || live.GetAnnotations()[api.CorrectedDriftAnnotation] != digest {
		return "", false
	}
	how := "in place"
	if s == StrategyRecreate {
		how = "by recreate"
	}
	return fmt.Sprintf("corrected %s once for %s, but the server does not keep the value (it, or another writer, sets it back): %s; "+
		"to have it corrected once more, remove annotation %s from the template",
		how, release, diff.Summary(changes, 60, 3), api.CorrectedDriftAnnotation), true
}
