package release

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"errors"
	"io"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
)

// errReadOnly is returned by every write through boundSecrets.
var errReadOnly = errors.New("release package is read-only: Secret writes are refused")

// boundSecrets is the Secret client handed to Helm's driver for one read.
//
// It exists because the driver calls Get with context.Background(): it binds
// the caller's context instead, so cancellation reaches the API call. It also
// records what Get returned, which tells an API failure (the Get failed) from
// a decode failure (the Get succeeded, the driver still failed), and which
// Secret version was decoded, for the memo. Writes are refused so the
// package stays read-only whatever the driver does.
type boundSecrets struct {
	corev1client.SecretInterface
	ctx context.Context

	got    *corev1.Secret
	getErr error
	gets   int

	// maxDecoded bounds the decompressed release (0: no bound); tooLarge
	// records that the Secret exceeded it.
	maxDecoded int64
	tooLarge   bool
}

var _ corev1client.SecretInterface = (*boundSecrets)(nil)

// Get reads the Secret with the bound context and records the outcome.
func (s *boundSecrets) Get(_ context.Context, name string, opts metav1.GetOptions) (*corev1.Secret, error) {
	s.gets++
	s.got, s.getErr = s.SecretInterface.Get(s.ctx, name, opts)
	if s.got == nil && s.getErr == nil {
		s.getErr = errors.New("API returned no Secret") // the driver would dereference nil
	}
	if s.getErr == nil && s.maxDecoded > 0 && decodedOver(s.got.Data["release"], s.maxDecoded) {
		// Helm's driver reads the whole decompressed release into memory:
		// hand it nothing to decode, so a gzip bomb costs a bounded read.
		s.tooLarge = true
		trimmed := s.got.DeepCopy()
		trimmed.Data["release"] = nil
		return trimmed, nil
	}
	return s.got, s.getErr
}

// gzipReaders keeps gzip readers between decodes: each holds a 32 KiB
// window, which a fleet's worth of first passes would otherwise allocate
// once per release.
var gzipReaders sync.Pool

// decodedOver reports whether data (base64, optionally gzip, as Helm stores
// data.release) decodes to more than limit bytes. It streams, holding at
// most one buffer, whatever the compression ratio.
func decodedOver(data []byte, limit int64) bool {
	raw := base64.NewDecoder(base64.StdEncoding, bytes.NewReader(data))
	head := make([]byte, 3)
	n, _ := io.ReadFull(raw, head)
	r := io.MultiReader(bytes.NewReader(head[:n]), raw)
	if n == 3 && bytes.Equal(head, []byte{0x1f, 0x8b, 0x08}) {
		zr, ok := gzipReaders.Get().(*gzip.Reader)
		var err error
		if ok {
			err = zr.Reset(r)
		} else {
			zr, err = gzip.NewReader(r)
		}
		if err != nil {
			return false // not gzip after all: the driver reports it as corrupt
		}
		defer gzipReaders.Put(zr)
		r = zr
	}
	read, _ := io.Copy(io.Discard, io.LimitReader(r, limit+1))
	return read > limit
}

// Create is refused: the package is read-only.
func (s *boundSecrets) Create(context.Context, *corev1.Secret, metav1.CreateOptions) (*corev1.Secret, error) {
	return nil, errReadOnly
}

// Update is refused: the package is read-only.
func (s *boundSecrets) Update(context.Context, *corev1.Secret, metav1.UpdateOptions) (*corev1.Secret, error) {
	return nil, errReadOnly
}

// Delete is refused: the package is read-only.
func (s *boundSecrets) Delete(context.Context, string, metav1.DeleteOptions) error {
	return errReadOnly
}

// DeleteCollection is refused: the package is read-only.
func (s *boundSecrets) DeleteCollection(context.Context, metav1.DeleteOptions, metav1.ListOptions) error {
	return errReadOnly
}

// Patch is refused: the package is read-only.
func (s *boundSecrets) Patch(context.Context, string, types.PatchType, []byte, metav1.PatchOptions, ...string) (*corev1.Secret, error) {
	return nil, errReadOnly
}

// Apply is refused: the package is read-only.
func (s *boundSecrets) Apply(context.Context, *corev1ac.SecretApplyConfiguration, metav1.ApplyOptions) (*corev1.Secret, error) {
	return nil, errReadOnly
}
