package release

// Exports for the integration tests, which live in package release_test
// because internal/testenv imports this package.
var (
	UpstreamDigest = upstreamDigest
	HelmEncode     = helmEncode
)

// DecodeCount returns how many release Secrets r decoded, to observe the memo.
func DecodeCount(r *Reader) int64 { return r.decodes.Load() }

// MemoLen returns how many releases r has memoized.
func MemoLen(r *Reader) int { n, _ := r.memo.size(); return n }
