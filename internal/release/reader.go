package release

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/opencontainers/go-digest"
	helmv1 "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage"
	"helm.sh/helm/v4/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/packed"
)

// Source is how a Reader reaches one cluster's Helm storage. A HelmRelease
// may target a remote cluster or impersonate a service account, so the
// clients are passed per call rather than fixed in the Reader.
type Source struct {
	// Secrets is used by Helm's Secrets driver to read and decode releases.
	Secrets corev1client.SecretsGetter
	// Meta is used for metadata-only reads (PartialObjectMetadata[List]) of
	// release Secrets, which are cheap and tell whether the memo is current.
	// Without it, Get decodes every time and Stored and PreviousDeployed fail.
	Meta client.Reader
	// Key identifies the cluster and identity for memoization, e.g. "local"
	// or "remote:<ns>/<secret>|<sa>". Entries are also bound to the Secret
	// UID, so a wrong Key costs decodes, never a wrong release.
	Key string
}

// Reader reads stored Helm releases through Helm v4's Secrets driver and
// memoizes the decoded releases by Secret UID and resourceVersion, so a
// release Secret is decoded only when it changed. The memo is bounded by
// the bytes its releases hold (their manifests, mostly), the least recently
// used going first. A Reader is safe for concurrent use.
type Reader struct {
	maxManifestBytes int
	memo             *memo
	// decodes counts the release Secrets decoded, so tests can observe the
	// memo.
	decodes atomic.Int64
	// algorithms are the digest algorithms met in status.history
	// (NoteSnapshot): every release decoded gets a digester of each.
	algorithms algorithmSet
}

// NewReader returns a Reader that refuses releases whose manifest is larger
// than maxManifestBytes (ErrManifestTooLarge); <= 0 means no limit. Its memo
// holds DefaultMemoBytes.
func NewReader(maxManifestBytes int) *Reader {
	return NewReaderWithMemo(maxManifestBytes, DefaultMemoBytes)
}

// NewReaderWithMemo is NewReader with a memo of at most memoBytes; <= 0
// memoizes nothing, so every read decodes its Secret.
func NewReaderWithMemo(maxManifestBytes int, memoBytes int64) *Reader {
	return &Reader{maxManifestBytes: maxManifestBytes, memo: newMemo(memoBytes)}
}

// Forget drops the memoized releases read through the source with this
// key: its target is gone, so nothing will ask for them again.
func (r *Reader) Forget(key string) { r.memo.forget(key) }

// MemoSize returns the number of memoized releases and the bytes they hold.
func (r *Reader) MemoSize() (entries int, bytes int64) { return r.memo.size() }

// Get returns version `version` of release `name` stored in namespace
// storageNS. It fails with ErrReleaseNotFound when the Secret does not exist,
// ErrReleaseCorrupt when its data cannot be decoded, and ErrManifestTooLarge
// when the manifest is over the limit. The result is the caller's to modify.
func (r *Reader) Get(ctx context.Context, src Source, storageNS, name string, version int) (*Release, error) {
	if src.Secrets == nil {
		return nil, fmt.Errorf("failed to get release %s/%s: source %q has no Secrets client",
			storageNS, SecretName(name, version), src.Key)
	}
	key := memoKey{source: src.Key, namespace: storageNS, name: SecretName(name, version)}
	if src.Meta != nil {
		e, err := r.lookup(ctx, src.Meta, key)
		if err != nil {
			return nil, err
		}
		if e != nil {
			return e.result()
		}
	}
	return r.decodeAndKeep(ctx, src, storageNS, key, name, version)
}

// decodeAndKeep decodes the Secret of key, memoizes what it made of it
// (replacing any older entry) and returns it.
func (r *Reader) decodeAndKeep(ctx context.Context, src Source, storageNS string, key memoKey, name string, version int) (*Release, error) {
	e, err := r.decode(ctx, src.Secrets.Secrets(storageNS), key, name, version)
	if err != nil {
		return nil, err
	}
	if e.uid != "" {
		r.memo.put(e)
	}
	return e.result()
}

// GetFor is GetIn for the release snap, the latest snapshot of a
// HelmRelease's status.history, names, ready for VerifySnapshot: the
// release has digesters of the algorithm snap's digest names. Every
// release decoded after a Reader first meets an algorithm gets its
// digesters along with sha256's, from the same encoding of the release;
// one memoized before is decoded once more. A digest VerifySnapshot would
// not compare, or could not (malformed, another algorithm), changes
// nothing here.
func (r *Reader) GetFor(ctx context.Context, src Source, storageNS, name string, snap *helmv2.Snapshot, stored []Stored) (*Release, error) {
	if snap == nil {
		return nil, fmt.Errorf("failed to get release %s/%s: %w: no snapshot", storageNS, name, ErrReleaseNotFound)
	}
	algo := r.NoteSnapshot(snap)
	rel, err := r.GetIn(ctx, src, storageNS, name, snap.Version, stored)
	if err != nil || algo == "" || rel.digestersOf(algo) != nil {
		return rel, err
	}
	key := memoKey{source: src.Key, namespace: storageNS, name: SecretName(name, snap.Version)}
	return r.decodeAndKeep(ctx, src, storageNS, key, name, snap.Version)
}

// NoteSnapshot records the algorithm of the digest snap records, so that
// the releases decoded from then on get its digesters, and returns it; ""
// when VerifySnapshot compares no digest for snap or cannot (see
// parseDigest). A warm-up notes the HelmReleases' snapshots first, so it
// decodes their releases with the algorithms their passes need.
func (r *Reader) NoteSnapshot(snap *helmv2.Snapshot) digest.Algorithm {
	s := checkedDigest(snap)
	if s == "" {
		return ""
	}
	d, err := parseDigest(s)
	if err != nil {
		return ""
	}
	r.algorithms.add(d.Algorithm())
	return d.Algorithm()
}

// GetIn is Get for a pass that has just listed the release's Secrets
// (Stored): when stored has the version, the memo is looked up by the UID
// and resourceVersion listed, without reading the Secret's metadata again.
// Where the add-on reads storage live (as an impersonated account, or on a
// remote cluster) that is one request fewer a pass. A version stored does
// not have is read as Get reads it.
func (r *Reader) GetIn(ctx context.Context, src Source, storageNS, name string, version int, stored []Stored) (*Release, error) {
	i := slices.IndexFunc(stored, func(s Stored) bool { return s.Version == version })
	if i < 0 || stored[i].UID == "" || src.Secrets == nil {
		return r.Get(ctx, src, storageNS, name, version)
	}
	key := memoKey{source: src.Key, namespace: storageNS, name: SecretName(name, version)}
	if e, ok := r.memo.get(key, stored[i].UID, stored[i].ResourceVersion); ok {
		return e.result()
	}
	return r.Get(ctx, src, storageNS, name, version)
}

// lookup reads the Secret's metadata only and returns the memo entry decoded
// from that exact Secret version, or nil when there is none.
func (r *Reader) lookup(ctx context.Context, meta client.Reader, key memoKey) (*memoEntry, error) {
	obj := &metav1.PartialObjectMetadata{}
	obj.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	err := meta.Get(ctx, client.ObjectKey{Namespace: key.namespace, Name: key.name}, obj)
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("failed to get release Secret %s/%s: %w: %w", key.namespace, key.name, ErrReleaseNotFound, err)
	}
	if err != nil {
		return nil, fmt.Errorf("failed to get metadata of release Secret %s/%s: %w", key.namespace, key.name, err)
	}
	e, _ := r.memo.get(key, obj.UID, obj.ResourceVersion)
	return e, nil
}

// minDecodedLimit is the least a decompressed release may reach: a Secret
// holds at most 1 MiB, and real releases decompress to a few MiB.
const minDecodedLimit = 64 << 20

// maxDecodedBytes bounds a decompressed release: eight times the manifest
// limit (room for the chart's templates, files and values stored beside the
// manifest), and never below minDecodedLimit. A Secret that decompresses to
// more (a gzip bomb) is refused before Helm's driver reads it into memory.
func maxDecodedBytes(maxManifestBytes int) int64 {
	if maxManifestBytes <= 0 {
		return 0
	}
	return max(int64(maxManifestBytes)*8, minDecodedLimit)
}

// decode reads and decodes the Secret with Helm's driver. API failures are
// returned as errors; decode outcomes, good or bad, as an entry to memoize.
func (r *Reader) decode(ctx context.Context, secrets corev1client.SecretInterface, key memoKey, name string, version int) (*memoEntry, error) {
	bound := &boundSecrets{SecretInterface: secrets, ctx: ctx, maxDecoded: maxDecodedBytes(r.maxManifestBytes)}
	rls, err := storage.Init(driver.NewSecrets(bound)).Get(name, version)
	switch {
	case errors.Is(err, driver.ErrReleaseNotFound):
		return nil, fmt.Errorf("failed to get release Secret %s/%s: %w", key.namespace, key.name, ErrReleaseNotFound)
	case bound.gets == 0 || bound.getErr != nil:
		return nil, fmt.Errorf("failed to get release Secret %s/%s: %w", key.namespace, key.name, err)
	}
	r.decodes.Add(1)
	e := &memoEntry{key: key, uid: bound.got.UID, resourceVersion: bound.got.ResourceVersion}
	if bound.tooLarge {
		e.err = fmt.Errorf("failed to decode release Secret %s/%s: %w: it decompresses to more than %d bytes",
			key.namespace, key.name, ErrManifestTooLarge, bound.maxDecoded)
		return e, nil
	}
	if err != nil {
		e.err = fmt.Errorf("failed to decode release Secret %s/%s: %w: %w", key.namespace, key.name, ErrReleaseCorrupt, err)
		return e, nil
	}
	typed, ok := rls.(*helmv1.Release)
	if !ok {
		e.err = fmt.Errorf("failed to decode release Secret %s/%s: %w: unexpected release type %T",
			key.namespace, key.name, ErrReleaseCorrupt, rls)
		return e, nil
	}
	e.rel, e.err = fromHelm(typed, name, version, r.maxManifestBytes, r.algorithms.list())
	if err := e.pack(); err != nil {
		return nil, err
	}
	return e, nil
}

// result returns a copy of the memoized release, so callers cannot change
// what other callers get, or the memoized error.
func (e *memoEntry) result() (*Release, error) {
	if e.err != nil {
		return nil, e.err
	}
	cp := *e.rel
	if e.manifest != "" {
		m, err := packed.Inflate(e.manifest, e.manifestLen)
		if err != nil {
			return nil, fmt.Errorf("failed to read the memoized manifest of release %s: %w", cp.Ref(), err)
		}
		if e.prepared {
			cp.Prepared = manifest.Prepared(m)
		} else {
			cp.Manifest = m
		}
	}
	return &cp, nil
}
