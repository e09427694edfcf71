package target_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/internal/target"
)

// recorder is a client.Reader that records the kinds it was asked for.
type recorder struct{ calls []string }

func (r *recorder) Get(_ context.Context, _ client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	r.calls = append(r.calls, "get "+obj.GetObjectKind().GroupVersionKind().Kind)
	return nil
}

func (r *recorder) List(_ context.Context, list client.ObjectList, _ ...client.ListOption) error {
	r.calls = append(r.calls, "list "+list.GetObjectKind().GroupVersionKind().Kind)
	return nil
}

// TestCachedReaderRoutes: the kinds the controller may watch come from the
// cache, as unstructured objects; the metadata of Secrets only when the
// cache holds it; Secret data, typed objects and every other kind live.
func TestCachedReaderRoutes(t *testing.T) {
	m3mt := schema.GroupVersionKind{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta1", Kind: "Metal3MachineTemplate"}
	other := schema.GroupVersionKind{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta1", Kind: "DockerMachineTemplate"}
	secretMeta := func() *metav1.PartialObjectMetadata {
		m := &metav1.PartialObjectMetadata{}
		m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
		return m
	}
	secretMetaList := func() *metav1.PartialObjectMetadataList {
		m := &metav1.PartialObjectMetadataList{}
		m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
		return m
	}
	obj := func(gvk schema.GroupVersionKind) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		return u
	}
	list := func(gvk schema.GroupVersionKind) *unstructured.UnstructuredList {
		u := &unstructured.UnstructuredList{}
		u.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		return u
	}
	cases := []struct {
		name       string // what the case proves
		secretMeta bool   // the cache holds Secret metadata
		read       func(ctx context.Context, r client.Reader) error
		wantCache  []string
		wantLive   []string
	}{
		{name: "a watched kind, get and list", read: func(ctx context.Context, r client.Reader) error {
			if err := r.Get(ctx, client.ObjectKey{Name: "a"}, obj(m3mt)); err != nil {
				return err
			}
			return r.List(ctx, list(m3mt))
		}, wantCache: []string{"get Metal3MachineTemplate", "list Metal3MachineTemplateList"}},
		{name: "a kind not in the cache", read: func(ctx context.Context, r client.Reader) error {
			return r.Get(ctx, client.ObjectKey{Name: "a"}, obj(other))
		}, wantLive: []string{"get DockerMachineTemplate"}},
		{name: "Secret metadata, cached", secretMeta: true, read: func(ctx context.Context, r client.Reader) error {
			if err := r.Get(ctx, client.ObjectKey{Name: "a"}, secretMeta()); err != nil {
				return err
			}
			return r.List(ctx, secretMetaList())
		}, wantCache: []string{"get Secret", "list SecretList"}},
		{name: "Secret metadata, not cached", read: func(ctx context.Context, r client.Reader) error {
			return r.List(ctx, secretMetaList())
		}, wantLive: []string{"list SecretList"}},
		{name: "a typed Secret (data) is always live", secretMeta: true, read: func(ctx context.Context, r client.Reader) error {
			s := &corev1.Secret{}
			s.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
			return r.Get(ctx, client.ObjectKey{Name: "a"}, s)
		}, wantLive: []string{"get Secret"}},
		{name: "metadata of a kind other than Secret is live", secretMeta: true, read: func(ctx context.Context, r client.Reader) error {
			m := &metav1.PartialObjectMetadata{}
			m.SetGroupVersionKind(m3mt)
			return r.Get(ctx, client.ObjectKey{Name: "a"}, m)
		}, wantLive: []string{"get Metal3MachineTemplate"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			cache, live := &recorder{}, &recorder{}
			r := &target.CachedReader{Cache: cache, Live: live, SecretMetadata: tc.secretMeta,
				Kinds: map[schema.GroupKind]bool{m3mt.GroupKind(): true}}
			g.Expect(tc.read(context.Background(), r)).To(Succeed())
			g.Expect(cache.calls).To(Equal(tc.wantCache))
			g.Expect(live.calls).To(Equal(tc.wantLive))
		})
	}
}
