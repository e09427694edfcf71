package release

import (
	"fmt"

	"github.com/templatedrift/template-drift-controller/internal/packed"
)

// A memoized release keeps its manifest compressed (flate, fastest level):
// manifests are YAML, which compresses several times, and the memo's bound
// counts the compressed bytes, so it holds several times more releases of
// a large cluster chart before one has to be read and decoded again. A
// pass inflates the manifest it reads, in microseconds beside the parse
// that follows.

// pack moves e's manifest into e.manifest, compressed.
func (e *memoEntry) pack() error {
	if e.rel == nil {
		return nil
	}
	p, err := packed.Deflate(e.rel.Manifest)
	if err != nil {
		return fmt.Errorf("failed to compress the manifest of release %s: %w", e.rel.Ref(), err)
	}
	e.manifest, e.manifestLen = p, len(e.rel.Manifest)
	rel := *e.rel
	rel.Manifest = ""
	e.rel = &rel
	return nil
}
