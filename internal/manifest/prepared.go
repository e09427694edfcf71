package manifest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A prepared manifest is a release manifest already split and checked, as
// Split gives it: one object a line, as JSON, in Split's order, each with
// its namespace defaulted. A release is read once and its objects many
// times (every pass of its HelmRelease), and parsing YAML is most of what
// reading its objects costs: the YAML parser builds a tree of each
// document, converts it to JSON, and only then decodes it. Decoding the
// prepared form is the last of those steps alone, and gives the same
// values: Split's objects are what encoding/json decodes, and encoding
// them again and decoding the result changes nothing.

// Prepared is a prepared manifest (see Prepare).
type Prepared string

// Prepare splits manifest as Split does and returns its prepared form. It
// fails as Split does, for the same manifests.
func Prepare(manifest, releaseNamespace string, maxBytes int) (Prepared, error) {
	objs, err := Split(manifest, releaseNamespace, maxBytes)
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b) // ends each object with a newline
	for i, o := range objs {
		if err := enc.Encode(o.Object); err != nil {
			return "", fmt.Errorf("%w: object %d: %w", ErrManifestInvalid, i+1, err)
		}
	}
	return Prepared(b.String()), nil
}

// Objects decodes p into the objects Split gave Prepare. It fails only on
// text Prepare did not make.
func (p Prepared) Objects() ([]*unstructured.Unstructured, error) {
	text := string(p)
	if text == "" {
		return nil, nil // as Split gives no objects
	}
	out := make([]*unstructured.Unstructured, 0, strings.Count(text, "\n"))
	for i := 0; text != ""; i++ {
		line, rest, _ := strings.Cut(text, "\n")
		text = rest
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			return nil, fmt.Errorf("%w: prepared object %d: %w", ErrManifestInvalid, i+1, err)
		}
		out = append(out, &unstructured.Unstructured{Object: m})
	}
	return out, nil
}
