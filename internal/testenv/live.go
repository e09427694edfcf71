package testenv

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/manifest"
)

// CreateLive creates the objects of the rendered manifest in namespace ns as Helm and
// Cluster API leave them after a pivot: Helm's ownership metadata for
// release on every object, and a Cluster ownerReference on every template
// (the Cluster first, so its UID is known). mutate, if not nil, edits each
// object before it is created.
func CreateLive(ctx context.Context, c client.Client, ns, release, rendered string, mutate func(*unstructured.Unstructured)) error {
	return createLive(ctx, c, ns, release, rendered, mutate, "")
}

// ApplyLive is CreateLive for a server-side-apply release: each object is
// applied by fieldManager (helm-controller's "helm-controller"), so that
// it owns the fields it set, Helm's ownership metadata among them, as
// after helm-controller's install.
func ApplyLive(ctx context.Context, c client.Client, ns, release, rendered, fieldManager string) error {
	return createLive(ctx, c, ns, release, rendered, nil, fieldManager)
}

func createLive(ctx context.Context, c client.Client, ns, release, rendered string, mutate func(*unstructured.Unstructured), fieldManager string) error {
	objs, err := manifest.Split(rendered, ns, 0)
	if err != nil {
		return err
	}
	var cluster *unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "Cluster" {
			cluster = o
		}
	}
	ordered := append([]*unstructured.Unstructured{cluster}, objs...)
	done := map[string]bool{}
	for _, o := range ordered {
		if o == nil || done[o.GetKind()+"/"+o.GetName()] {
			continue
		}
		done[o.GetKind()+"/"+o.GetName()] = true
		o.SetAnnotations(merge(o.GetAnnotations(), map[string]string{
			api.HelmReleaseNameAnnotation: release, api.HelmReleaseNamespaceAnnotation: ns}))
		o.SetLabels(merge(o.GetLabels(), map[string]string{api.HelmManagedByLabel: "Helm"}))
		if strings.HasSuffix(o.GetKind(), "Template") && cluster != nil {
			o.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: cluster.GetAPIVersion(), Kind: "Cluster", Name: cluster.GetName(), UID: cluster.GetUID()}})
		}
		if mutate != nil {
			mutate(o)
		}
		if fieldManager != "" {
			body, err := json.Marshal(o.Object)
			if err != nil {
				return err
			}
			if err := c.Patch(ctx, o, client.RawPatch(types.ApplyPatchType, body), client.FieldOwner(fieldManager), client.ForceOwnership); err != nil {
				return fmt.Errorf("failed to apply %s %s: %w", o.GetKind(), o.GetName(), err)
			}
			continue
		}
		if err := c.Create(ctx, o); err != nil {
			return fmt.Errorf("failed to create %s %s: %w", o.GetKind(), o.GetName(), err)
		}
	}
	return nil
}

func merge(a, b map[string]string) map[string]string {
	out := make(map[string]string, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}
