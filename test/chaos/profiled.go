package chaos

import (
	"fmt"
	"os"

	"github.com/google/pprof/profile"
)

// ProfiledLiveBytes reads the heap profile at path (as /debug/pprof/heap
// serves it) and returns the bytes of the live objects it estimates
// (inuse_space): the heap as the last collection left it. Unlike
// go_memstats_heap_alloc_bytes scraped after that collection, it counts
// nothing allocated since, so a pass running between the collection and the
// scrape does not move it.
func ProfiledLiveBytes(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		return 0, fmt.Errorf("failed to parse the heap profile %s: %w", path, err)
	}
	idx := -1
	for i, st := range p.SampleType {
		if st.Type == "inuse_space" {
			idx = i
		}
	}
	if idx < 0 {
		return 0, fmt.Errorf("the heap profile %s has no inuse_space", path)
	}
	var n int64
	for _, s := range p.Sample {
		n += s.Value[idx]
	}
	return n, nil
}
