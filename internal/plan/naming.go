package plan

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
)

const (
	// maxNameLength is the limit of a DNS-1123 subdomain, which every
	// Cluster API template name is.
	maxNameLength = 253
	// hashLength is the suffix length, as kustomize's name hashes.
	hashLength = 10
)

// SpecHash returns hashLength hex characters of the sha256 of the canonical
// JSON of spec (encoding/json sorts map keys, so equal specs hash equally).
func SpecHash(spec any) (string, error) {
	b, err := json.Marshal(spec)
	if err != nil {
		return "", fmt.Errorf("failed to encode spec for hashing: %w", err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])[:hashLength], nil
}

// RotatedName returns the deterministic name of the replacement of the
// template the manifest calls base, for desired spec spec:
// `<base>-<10 hex>`. The base is always the manifest's name, so a second
// rotation never grows the name; a base too long for the suffix is cut, and
// trailing separators are trimmed so the name stays a valid subdomain.
func RotatedName(base string, spec any) (string, error) {
	h, err := SpecHash(spec)
	if err != nil {
		return "", err
	}
	if limit := maxNameLength - hashLength - 1; len(base) > limit {
		base = strings.TrimRight(base[:limit], "-.")
	}
	return base + "-" + h, nil
}
