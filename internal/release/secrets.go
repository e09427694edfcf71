package release

import (
	"context"
	"errors"

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
}

var _ corev1client.SecretInterface = (*boundSecrets)(nil)

// Get reads the Secret with the bound context and records the outcome.
func (s *boundSecrets) Get(_ context.Context, name string, opts metav1.GetOptions) (*corev1.Secret, error) {
	s.gets++
	s.got, s.getErr = s.SecretInterface.Get(s.ctx, name, opts)
	if s.got == nil && s.getErr == nil {
		s.getErr = errors.New("API returned no Secret") // the driver would dereference nil
	}
	return s.got, s.getErr
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
