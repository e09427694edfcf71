package pipeline

import (
	"context"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/internal/manifest"
)

// upgradedClient is the target as an upgrade would leave it, for Foresee's
// pass: reads of the objects the upgrade writes return what the server
// would store (or not found, for a deletion), lists include them, and
// Helm's storage has the upgraded release's Secret, the one deployed now
// superseded. Writes go to the target unchanged: a read-only pass makes
// only dry-runs. The rest is read through reader: the target's own door.
type upgradedClient struct {
	client.Client
	reader  client.Reader
	objects map[manifest.ID]*unstructured.Unstructured
	secret  *corev1.Secret
}

var secretGVK = corev1.SchemeGroupVersion.WithKind("Secret")

func (u *upgradedClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		id := manifest.ID{GroupKind: o.GroupVersionKind().GroupKind(), Namespace: key.Namespace, Name: key.Name}
		if after, ok := u.objects[id]; ok {
			if after == nil {
				return apierrors.NewNotFound(schema.GroupResource{Group: id.Group, Resource: strings.ToLower(id.Kind)}, key.Name)
			}
			gvk := o.GroupVersionKind()
			after.DeepCopyInto(o)
			o.SetGroupVersionKind(gvk)
			return nil
		}
	case *metav1.PartialObjectMetadata:
		if o.GroupVersionKind() == secretGVK && key.Namespace == u.secret.Namespace && key.Name == u.secret.Name {
			o.ObjectMeta = *u.secret.ObjectMeta.DeepCopy()
			return nil
		}
	}
	return u.reader.Get(ctx, key, obj, opts...)
}

func (u *upgradedClient) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if err := u.reader.List(ctx, list, opts...); err != nil {
		return err
	}
	lo := (&client.ListOptions{}).ApplyOptions(opts)
	switch l := list.(type) {
	case *unstructured.UnstructuredList:
		u.overlayList(l, lo)
	case *metav1.PartialObjectMetadataList:
		if l.GroupVersionKind() == corev1.SchemeGroupVersion.WithKind("SecretList") {
			u.overlaySecrets(l, lo)
		}
	}
	return nil
}

// overlayList replaces the listed objects the upgrade writes with what the
// server would store, drops those it deletes, and adds those it creates.
// A list by label selector is left as it is: the pipeline lists templates
// and users by namespace only.
func (u *upgradedClient) overlayList(l *unstructured.UnstructuredList, lo *client.ListOptions) {
	if lo.LabelSelector != nil && !lo.LabelSelector.Empty() {
		return
	}
	gk := schema.FromAPIVersionAndKind(l.GetAPIVersion(), strings.TrimSuffix(l.GetKind(), "List")).GroupKind()
	seen := map[manifest.ID]bool{}
	items := l.Items[:0]
	for _, item := range l.Items {
		id := manifest.ID{GroupKind: gk, Namespace: item.GetNamespace(), Name: item.GetName()}
		seen[id] = true
		after, ok := u.objects[id]
		switch {
		case !ok:
			items = append(items, item)
		case after != nil:
			items = append(items, *u.at(after, item.GroupVersionKind()))
		}
	}
	for id, after := range u.objects {
		if after == nil || seen[id] || id.GroupKind != gk || (lo.Namespace != "" && id.Namespace != lo.Namespace) {
			continue
		}
		items = append(items, *u.at(after, gk.WithVersion(schema.FromAPIVersionAndKind(l.GetAPIVersion(), "").Version)))
	}
	l.Items = items
}

// at is a copy of after named at the version the list was asked at. The
// pipeline lists a kind at the version the release uses, which is the
// version the upgrade's dry-runs answered at.
func (u *upgradedClient) at(after *unstructured.Unstructured, gvk schema.GroupVersionKind) *unstructured.Unstructured {
	c := after.DeepCopy()
	c.SetGroupVersionKind(gvk)
	return c
}

// overlaySecrets is Helm's storage after the upgrade, as the metadata list
// of its Secrets shows it: the release deployed now is superseded, and the
// upgraded release's Secret is there.
func (u *upgradedClient) overlaySecrets(l *metav1.PartialObjectMetadataList, lo *client.ListOptions) {
	if lo.Namespace != "" && lo.Namespace != u.secret.Namespace {
		return
	}
	name := u.secret.Labels["name"]
	for i := range l.Items {
		it := &l.Items[i]
		if it.Namespace == u.secret.Namespace && it.Labels["owner"] == "helm" && it.Labels["name"] == name && it.Labels["status"] == "deployed" {
			it.Labels = copyLabels(it.Labels)
			it.Labels["status"] = "superseded"
		}
	}
	if lo.LabelSelector == nil || lo.LabelSelector.Matches(labels.Set(u.secret.Labels)) {
		l.Items = append(l.Items, metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
			ObjectMeta: *u.secret.ObjectMeta.DeepCopy()})
	}
}

func copyLabels(in map[string]string) map[string]string {
	out := make(map[string]string, len(in))
	for k, v := range in {
		out[k] = v
	}
	return out
}
