package release

import (
	"crypto/sha256"
	"fmt"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
)

// maxNameLength is Helm's limit on release names.
const maxNameLength = 53

// Name returns the Helm release name helm-controller uses for hr:
// spec.releaseName, else [targetNamespace-]name, shortened above 53
// characters to the first 40 + "-" + 12 hex of its sha256, exactly as
// helm-controller's internal/release.ShortenName does.
func Name(hr *helmv2.HelmRelease) string {
	return shorten(hr.GetReleaseName())
}

func shorten(name string) string {
	if len(name) <= maxNameLength {
		return name
	}
	const hashLength = 12
	sum := fmt.Sprintf("%x", sha256.Sum256([]byte(name)))
	return name[:maxNameLength-(hashLength+1)] + "-" + sum[:hashLength]
}
