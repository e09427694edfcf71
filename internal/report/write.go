package report

import (
	"context"
	"fmt"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/api"
)

// Writer writes a pass's summary to its HelmRelease: the condition, the
// events and the metrics.
type Writer struct {
	// Client reads and patches HelmReleases on the controller's cluster.
	Client client.Client
	// Events records events on the HelmRelease, with the metadata
	// helm-controller gives its own (EventMetadata); nil records none.
	Events events.AnnotatedEventRecorder
	// Metrics is updated with every summary; nil updates none.
	Metrics *Metrics
}

// Write applies out to the HelmRelease key: the condition (only when it
// changed), then the events of a new state. It returns whether the
// condition changed.
func (w *Writer) Write(ctx context.Context, key client.ObjectKey, out Summary) (bool, error) {
	var changed, significant bool
	var hr *helmv2.HelmRelease
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		hr = &helmv2.HelmRelease{}
		if err := w.Client.Get(ctx, key, hr); err != nil {
			return err
		}
		base := hr.DeepCopy()
		changed, significant = applyCondition(hr, out)
		if !changed {
			return nil
		}
		patch := client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})
		return w.Client.Status().Patch(ctx, hr, patch)
	})
	if err != nil {
		return false, fmt.Errorf("failed to write %s condition on HelmRelease %s: %w", api.TemplatesInSyncCondition, key, err)
	}
	meta := EventMetadata(snapshotOf(hr, out.ReleaseVersion))
	for _, e := range out.Events {
		if significant || e.Always {
			if w.Events != nil {
				w.Events.AnnotatedEventf(hr, nil, meta, e.Type, e.Reason, "Reconcile", "%s", e.Message)
			}
		}
	}
	w.Metrics.observe(key, out.Conclusion)
	w.Metrics.observePruned(out.Pruned)
	return changed, nil
}

// setCondition sets (or removes) the condition on hr and reports whether it changed.
func setCondition(hr *helmv2.HelmRelease, out Summary) bool {
	changed, _ := applyCondition(hr, out)
	return changed
}

// applyCondition sets (or removes) the condition on hr and reports whether it
// changed, and whether the change is significant: one the condition's
// events are emitted for. A change of the clean-up note alone (the
// replacements a pass deleted, which the next pass no longer names) is not:
// the TemplatePruned event already told it, and the drift events must not
// repeat for it.
func applyCondition(hr *helmv2.HelmRelease, out Summary) (changed, significant bool) {
	current := apimeta.FindStatusCondition(hr.Status.Conditions, api.TemplatesInSyncCondition)
	switch {
	case out.Remove:
		changed = apimeta.RemoveStatusCondition(&hr.Status.Conditions, api.TemplatesInSyncCondition)
		return changed, changed
	case out.Condition == nil:
		return false, false
	}
	want := *out.Condition
	want.ObservedGeneration = hr.Generation
	if current != nil && current.Status == want.Status && current.Reason == want.Reason &&
		current.Message == want.Message && current.ObservedGeneration == want.ObservedGeneration {
		return false, false
	}
	significant = current == nil || current.Status != want.Status || current.Reason != want.Reason ||
		current.ObservedGeneration != want.ObservedGeneration || withoutPruneNote(current.Message) != withoutPruneNote(want.Message)
	want.LastTransitionTime = metav1.Now()
	return apimeta.SetStatusCondition(&hr.Status.Conditions, want), significant
}
