package release

import (
	"fmt"

	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/packed"
)

// A memoized release keeps its manifest prepared (manifest.Prepare: split,
// checked and as JSON, so the passes that read it again decode JSON instead
// of parsing YAML) and compressed (flate, fastest level): manifests
// compress several times, and the memo's bound counts the compressed
// bytes, so it holds several times more releases of a large cluster chart
// before one has to be read and decoded again. A pass inflates what it
// reads, in microseconds beside the decode that follows. A manifest that
// does not parse is kept as it is, so every pass that reads it reports why.

// pack moves e's manifest into e.manifest, prepared and compressed.
func (e *memoEntry) pack() error {
	if e.rel == nil {
		return nil
	}
	text, prepared := e.rel.Manifest, false
	if p, err := manifest.Prepare(e.rel.Manifest, e.rel.Namespace, 0); err == nil {
		text, prepared = string(p), true
	}
	p, err := packed.Deflate(text)
	if err != nil {
		return fmt.Errorf("failed to compress the manifest of release %s: %w", e.rel.Ref(), err)
	}
	e.manifest, e.manifestLen, e.prepared = p, len(text), prepared
	rel := *e.rel
	rel.Manifest, rel.ManifestBytes = "", len(e.rel.Manifest)
	e.rel = &rel
	return nil
}
