package release

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
)

// fuzzMaxManifest is small enough that some seeds hit ErrManifestTooLarge.
const fuzzMaxManifest = 200

// FuzzDecode feeds arbitrary data.release values through a fake Secrets
// client into Helm's driver and this package's conversion and digest: the
// whole path Reader.Get takes for a Secret it has not seen. It must never
// panic, and every failure must be ErrReleaseCorrupt or ErrManifestTooLarge.
// With encode set, data is release JSON the target base64-encodes, as Helm
// stored releases before it compressed them (the driver still reads those),
// so the fuzzer also explores the JSON and conversion stages; gzip is left
// out there because a gzip writer per run would slow fuzzing tenfold.
func FuzzDecode(f *testing.F) {
	for _, file := range []string{"full.json", "minimal.json", "rollback.json", "testhooks-only.json"} {
		data, name, version := fixtureJSON(f, file)
		var compact bytes.Buffer
		if err := json.Compact(&compact, data); err != nil {
			f.Fatal(err)
		}
		// Small seeds keep minimizing new inputs quick.
		f.Add(name, version, compact.Bytes(), true)
		f.Add(name, version, helmEncode(f, data), false)
	}
	f.Add("r", 1, []byte(`{"name":"r","version":1,"info":{"status":"deployed"},"hooks":[null]}`), true)
	f.Add("r", 1, []byte(`{"name":"r","version":1,"info":{"resources":{"a":[{}]}}}`), true)
	f.Add("r", 1, []byte("not base64!"), false)
	f.Add("r", 1, []byte(base64.StdEncoding.EncodeToString([]byte{0x1f, 0x8b, 0x08, 0, 0})), false)
	f.Add("r", 1, []byte{}, false)

	f.Fuzz(func(t *testing.T, name string, version int, data []byte, encode bool) {
		if encode {
			data = []byte(base64.StdEncoding.EncodeToString(data))
		}
		rel, err := NewReader(fuzzMaxManifest).Get(context.Background(), fakeSource(name, version, data), "ns", name, version)
		if err != nil {
			if !errors.Is(err, ErrReleaseCorrupt) && !errors.Is(err, ErrManifestTooLarge) {
				t.Fatalf("unclassified error: %v", err)
			}
			if rel != nil {
				t.Fatalf("release returned with error %v", err)
			}
			return
		}
		checkFuzzedRelease(t, rel, name, version)
	})
}

// checkFuzzedRelease checks what a successful decode promises.
func checkFuzzedRelease(t *testing.T, rel *Release, name string, version int) {
	t.Helper()
	if rel.Name != name || rel.Version != version {
		t.Fatalf("decoded %s for %s.v%d", rel.Ref(), name, version)
	}
	if len(rel.Manifest) > fuzzMaxManifest {
		t.Fatalf("manifest of %d bytes passed the %d limit", len(rel.Manifest), fuzzMaxManifest)
	}
	if !strings.HasPrefix(rel.Digest, "sha256:") || len(rel.Digest) != len("sha256:")+64 {
		t.Fatalf("bad digest %q", rel.Digest)
	}
	snap := &helmv2.Snapshot{
		APIVersion: helmv2.CurrentSnapshotAPIVersion,
		Name:       rel.Name, Namespace: rel.Namespace, Version: rel.Version, Digest: rel.Digest,
	}
	if err := VerifySnapshot(rel, snap); err != nil {
		t.Fatalf("release does not verify against its own snapshot: %v", err)
	}
}
