package apply

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/internal/diff"
)

// DryRunInPlace asks the server whether it accepts changes on live, with
// dryRun=All: validation, CEL rules and admission webhooks all run, nothing
// is stored. It returns the object the server would store (its view of the
// corrected template, after admission and the round trip through the
// storage version), so the same request both chooses the strategy and
// confirms the drift; or the server's error, which plan.InPlaceDryRun
// reads.
func DryRunInPlace(ctx context.Context, c client.Client, live *unstructured.Unstructured, changes []diff.Change) (*unstructured.Unstructured, error) {
	patch, err := diff.Patch(changes, "")
	if err != nil {
		return nil, err
	}
	obj := live.DeepCopy()
	// The server's error comes back unwrapped: its words are the message
	// of a refused correction.
	if err := c.Patch(ctx, obj, client.RawPatch(types.JSONPatchType, patch), client.DryRunAll, fieldOwner); err != nil {
		return nil, err
	}
	return obj, nil
}

// ServerView returns what the server would store if obj were created, from
// a create with dryRun=All under a probe name (the real name is taken):
// defaulting, admission and the conversion to the storage version and back
// all run, and nothing is stored. Comparing it with the live object tells
// drift from the differences the server makes itself (diff.Confirm). An
// error means the server refused the object; the caller cannot confirm.
func ServerView(ctx context.Context, c client.Client, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	view, err := dryRunCreate(ctx, c, obj)
	if err != nil {
		return nil, fmt.Errorf("failed to dry-run create %s %s/%s: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
	}
	return view, nil
}

// dryRunCreate creates a copy of obj under probeName with dryRun=All and
// returns the server's answer. Server-set metadata a manifest object might
// carry is cleared, as a create refuses a resourceVersion.
func dryRunCreate(ctx context.Context, c client.Client, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	probe := obj.DeepCopy()
	probe.SetName(probeName(obj.GetName()))
	probe.SetResourceVersion("")
	probe.SetUID("")
	if err := c.Create(ctx, probe, client.DryRunAll, fieldOwner); err != nil {
		return nil, err
	}
	return probe, nil
}

// probeName derives a valid, unused-looking name for a dry-run create.
func probeName(name string) string {
	const suffix = "-tdc-probe"
	if len(name)+len(suffix) > 253 {
		name = strings.TrimRight(name[:253-len(suffix)], "-.")
	}
	return name + suffix
}
