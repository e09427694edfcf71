package preview

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/plan"
)

// helmFieldManager is the field manager helm-controller applies with.
const helmFieldManager = "helm-controller"

// applied is what the server answered to the dry-run of one object's
// part of the upgrade.
type applied struct {
	// live is the object now (nil: it does not exist).
	live *unstructured.Unstructured
	// after is the object the server would store (nil: deleted, or
	// refused).
	after *unstructured.Unstructured
	// refused is the server's refusal of the change.
	refused error
}

// dryRunUpdate asks the server what the upgrade does to one object that the
// new manifest renders, with exactly the request helm-controller's Helm
// sends, marked dry-run: under server-side apply, the whole object applied
// with forced conflicts as helm-controller's field manager; under
// client-side apply, Helm's JSON merge patch from the object in the old
// manifest to the new one (custom resources get no three-way merge), or for
// an object the old manifest did not have, the adopting patch from the live
// object to the new one. An object that does not exist is created.
// Helm's own client cannot be used for this: its client-side patches and
// its deletions ignore the dry-run option.
func dryRunUpdate(ctx context.Context, c client.Client, old, desired *unstructured.Unstructured, ssa bool) (applied, error) {
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(desired.GroupVersionKind())
	err := c.Get(ctx, client.ObjectKeyFromObject(desired), live)
	switch {
	case apierrors.IsNotFound(err):
		after := desired.DeepCopy()
		if err := c.Create(ctx, after, client.DryRunAll, client.FieldOwner(helmFieldManager)); err != nil {
			return refusal(nil, err)
		}
		return applied{after: after}, nil
	case err != nil:
		return applied{}, fmt.Errorf("failed to read %s: %w", describe(desired), err)
	}
	after := desired.DeepCopy()
	if ssa {
		err = c.Patch(ctx, after, client.RawPatch(types.ApplyPatchType, mustJSON(desired)), client.DryRunAll,
			client.FieldOwner(helmFieldManager), client.ForceOwnership)
		return answer(live, after, err)
	}
	// Helm's patch also adds its ownership metadata, which a release's
	// live objects already carry: left out of the patch (on both sides),
	// an unchanged object sends no request, so a controller's write between
	// the read above and a dry-run cannot make it look changed.
	base := live
	if old != nil {
		base = withOwnership(old, desired.GetAnnotations()[api.HelmReleaseNameAnnotation], desired.GetAnnotations()[api.HelmReleaseNamespaceAnnotation])
	}
	patch, err := jsonpatch.CreateMergePatch(mustJSON(base), mustJSON(desired))
	if err != nil {
		return applied{}, fmt.Errorf("failed to compute Helm's patch of %s: %w", describe(desired), err)
	}
	if string(patch) == "{}" {
		// Helm sends no request: the object stays as it is.
		return applied{live: live, after: live.DeepCopy()}, nil
	}
	after = live.DeepCopy()
	err = c.Patch(ctx, after, client.RawPatch(types.MergePatchType, patch), client.DryRunAll, client.FieldOwner(helmFieldManager))
	return answer(live, after, err)
}

// withOwnership is o as Helm sends it in an upgrade: with the ownership
// metadata Helm sets on every object of the new manifest (the managed-by
// label, the release name and namespace annotations), which the manifest
// itself does not carry. Under server-side apply, an object applied
// without them would give them up.
func withOwnership(o *unstructured.Unstructured, releaseName, releaseNamespace string) *unstructured.Unstructured {
	c := o.DeepCopy()
	labels := c.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[api.HelmManagedByLabel] = "Helm"
	c.SetLabels(labels)
	annotations := c.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[api.HelmReleaseNameAnnotation] = releaseName
	annotations[api.HelmReleaseNamespaceAnnotation] = releaseNamespace
	c.SetAnnotations(annotations)
	return c
}

// dryRunDelete asks the server whether the upgrade's deletion of an object
// the new manifest drops would go through. An object that is already gone,
// or that Helm keeps (helm.sh/resource-policy: keep), stays.
func dryRunDelete(ctx context.Context, c client.Client, dropped *unstructured.Unstructured) (applied, bool, error) {
	if dropped.GetAnnotations()["helm.sh/resource-policy"] == "keep" {
		return applied{}, false, nil
	}
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(dropped.GroupVersionKind())
	if err := c.Get(ctx, client.ObjectKeyFromObject(dropped), live); err != nil {
		if apierrors.IsNotFound(err) {
			return applied{}, false, nil
		}
		return applied{}, false, fmt.Errorf("failed to read %s: %w", describe(dropped), err)
	}
	if err := c.Delete(ctx, live.DeepCopy(), client.DryRunAll); err != nil {
		a, err := refusal(live, err)
		return a, true, err
	}
	return applied{live: live}, true, nil
}

// answer turns the server's answer to a dry-run write into an applied.
func answer(live, after *unstructured.Unstructured, err error) (applied, error) {
	if err != nil {
		return refusal(live, err)
	}
	return applied{live: live, after: after}, nil
}

// refusal keeps the server's refusal of a change (plan.UpgradeRefusal) as
// the prediction; any other error (the server could not answer, or the
// previewing identity may not ask) fails the preview.
func refusal(live *unstructured.Unstructured, err error) (applied, error) {
	switch {
	case plan.UpgradeRefusal(err):
		return applied{live: live, refused: err}, nil
	case plan.AccessDenied(err):
		return applied{}, fmt.Errorf("the preview's identity may not ask this dry-run (a dry-run needs the write's verb; the chart's optional preview ClusterRole has them): %w", err)
	}
	return applied{}, err
}

func mustJSON(o *unstructured.Unstructured) []byte {
	b, err := json.Marshal(o.Object)
	if err != nil {
		// An unstructured object parsed from YAML or JSON always marshals.
		panic(err)
	}
	return b
}

func describe(o *unstructured.Unstructured) string {
	return o.GetKind() + " " + strings.TrimPrefix(o.GetNamespace()+"/", "/") + o.GetName()
}
