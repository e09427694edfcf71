package scale

import (
	"context"
	"fmt"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/api"
)

// machineTemplate is the kind of the fleet's drifted templates, at the
// version the chart renders.
var machineTemplate = schema.GroupVersionKind{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta1", Kind: "Metal3MachineTemplate"}

// reactionImageURL is the drift written during the steady state: an image
// server no release renders.
const reactionImageURL = "http://10.10.10.99/images/ubuntu.qcow2"

// reactionSamples is how many in-sync releases get a drift, one after
// the other: one sample says little about a race between watches.
const reactionSamples = 3

// measureReactions writes drift into a template of a few of the n
// releases that were in sync from the start, one after the other, and
// times each until the template is corrected, then until its HelmRelease
// reports DriftCorrected. Only the add-on heals: helm-controller in warn
// mode corrects nothing.
func measureReactions(ctx context.Context, c client.Client, drift Drift, n int) ([]Reaction, error) {
	var out []Reaction
	for k := range min(reactionSamples, n/2) {
		i := 2*k + 1 // Drifted(i) is false: in sync since setup.
		r, err := reactOnce(ctx, c, drift, Namespace(i))
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

func reactOnce(ctx context.Context, c client.Client, drift Drift, ns string) (Reaction, error) {
	tmpl := &unstructured.Unstructured{}
	tmpl.SetGroupVersionKind(drift.GVK)
	key := client.ObjectKey{Namespace: ns, Name: drift.Name}
	tmpl.SetNamespace(ns)
	tmpl.SetName(key.Name)
	start := time.Now()
	if err := c.Patch(ctx, tmpl, client.RawPatch(types.MergePatchType, []byte(drift.Patch))); err != nil {
		return Reaction{}, fmt.Errorf("failed to write the drift: %w", err)
	}
	out := Reaction{Namespace: ns}
	err := wait.PollUntilContextTimeout(ctx, reactionPoll, reactionTimeout, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, key, tmpl); err != nil {
			return false, err
		}
		return drift.Healed(tmpl), nil
	})
	if err != nil {
		return out, fmt.Errorf("template %s/%s not corrected: %w", ns, key.Name, err)
	}
	out.HealedSeconds = time.Since(start).Seconds()
	hr := &helmv2.HelmRelease{}
	err = wait.PollUntilContextTimeout(ctx, reactionPoll, reactionTimeout, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: releaseName}, hr); err != nil {
			return false, err
		}
		cond := apimeta.FindStatusCondition(hr.Status.Conditions, api.TemplatesInSyncCondition)
		return cond != nil && cond.Status == metav1.ConditionTrue && cond.Reason == api.DriftCorrectedReason, nil
	})
	if err != nil {
		return out, fmt.Errorf("HelmRelease %s/%s did not report %s: %w", ns, releaseName, api.DriftCorrectedReason, err)
	}
	out.ReportedSeconds = time.Since(start).Seconds()
	return out, nil
}
