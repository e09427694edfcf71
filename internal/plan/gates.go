package plan

import (
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/templatedrift/template-drift-controller/api"
)

// Facts are what the gates look at, gathered once per pass.
type Facts struct {
	// Options as parsed; ConfigErr is the parse error, if any.
	Options   Options
	ConfigErr error
	// Suspended mirrors the HelmRelease's spec.suspend.
	Suspended bool
	// ReleaseErr is why the stored release cannot be used (missing, corrupt,
	// history mismatch), or nil.
	ReleaseErr error
	// ReleaseStatus is the stored release's Helm status.
	ReleaseStatus string
	// HistoryVersion is the release version status.history's latest
	// snapshot names; 0 when the history is empty.
	HistoryVersion int
	// Stored lists the release's versions in Helm storage, each with the
	// status Helm's storage driver labels its Secret with.
	Stored []StoredRelease
	// Helm says how Helm applies the release's objects next; valid once the
	// stored release is read.
	Helm HelmFacts
	// MissingClusters and DeletingClusters name ("<ns>/<name>") the
	// Clusters the release renders that do not exist live, or that are
	// being deleted.
	MissingClusters, DeletingClusters []string
	// PausedClusters names the release's Clusters that are paused.
	PausedClusters []string
	// PausedObjects names ("<Kind> <ns>/<name>") the live templates and
	// consumers of the release that the pass would look at and that carry
	// the cluster.x-k8s.io/paused annotation.
	PausedObjects []string
}

// StoredRelease is one version of the release in Helm storage.
type StoredRelease struct {
	Version int
	// Status is Helm's status of that version ("deployed", "pending-upgrade", ...).
	Status string
}

// Verdict is a gate's answer when it stops the pass.
type Verdict struct {
	// Reason is a TemplatesInSync reason; Status is its condition status.
	Reason, Message string
	Status          metav1.ConditionStatus
	// Remove asks the reporter to remove the condition (mode disabled).
	Remove bool
	// Silent verdicts write no condition change and no event (suspend).
	Silent bool
}

// Gate inspects Facts and returns a verdict and true to stop the pass.
type Gate func(f Facts) (Verdict, bool)

// ObjectGates need only the HelmRelease; a pass runs them before it reads
// anything from the target cluster.
var ObjectGates = []Gate{GateConfig, GateDisabled, GateSuspended}

// LiveGates are the gates a pass runs once gather has read the target:
// the configuration again (gather finds errors of its own: an ignore rule
// that does not parse, a reference into another namespace), Helm in
// flight first (it explains a history that lags storage better than the
// release gate would), the release, a strategy the release's apply mode
// undoes, then the waits on the live world.
var LiveGates = []Gate{GateConfig, GateHelmInFlight, GateRelease, GateRotateUndone, GateClusterUnavailable, GatePaused, GateObjectPaused}

// Gates is the whole ordered chain a pass runs before it decides anything
// about a template: the object gates, then the live gates. A pass runs it
// in two parts (ObjectGates before it reads anything, LiveGates after
// gather), which stop where the whole chain stops.
var Gates = append(append([]Gate{}, ObjectGates...), LiveGates[1:]...)

// Evaluate runs gates in order and returns the first stopping verdict.
func Evaluate(f Facts, gates []Gate) (Verdict, bool) {
	for _, g := range gates {
		if v, stop := g(f); stop {
			return v, true
		}
	}
	return Verdict{}, false
}

// GateConfig stops on an invalid annotation, unless the mode parsed as
// disabled (an opted-out release gets no condition at all).
func GateConfig(f Facts) (Verdict, bool) {
	if f.ConfigErr == nil || f.Options.Mode == ModeDisabled {
		return Verdict{}, false
	}
	return Verdict{Status: metav1.ConditionFalse, Reason: api.InvalidConfigurationReason, Message: f.ConfigErr.Error()}, true
}

// GateDisabled stops a release that did not opt in, and removes our condition.
func GateDisabled(f Facts) (Verdict, bool) {
	if f.Options.Mode != ModeDisabled {
		return Verdict{}, false
	}
	return Verdict{Remove: true}, true
}

// GateSuspended stops a suspended HelmRelease without touching its status:
// Flux users expect a suspended object to be left alone.
func GateSuspended(f Facts) (Verdict, bool) {
	if !f.Suspended {
		return Verdict{}, false
	}
	return Verdict{Silent: true}, true
}

// GateRelease waits while the stored release cannot be used. A release in
// status deployed or failed is usable: a failed release is one Helm tried to
// apply, and healing its templates lets helm-controller's retry pass. A
// pending release normally stops at GateHelmInFlight first; it stops here
// when storage could not be listed with its labels.
func GateRelease(f Facts) (Verdict, bool) {
	if f.ReleaseErr != nil {
		return Verdict{Status: metav1.ConditionUnknown, Reason: api.ReleaseUnavailableReason, Message: f.ReleaseErr.Error()}, true
	}
	switch f.ReleaseStatus {
	case "deployed", "failed":
		return Verdict{}, false
	default:
		return Verdict{Status: metav1.ConditionUnknown, Reason: api.ReleaseUnavailableReason,
			Message: fmt.Sprintf("waiting: stored release is %s", f.ReleaseStatus)}, true
	}
}

// GatePaused waits while a Cluster of the release is paused.
func GatePaused(f Facts) (Verdict, bool) {
	if len(f.PausedClusters) == 0 {
		return Verdict{}, false
	}
	return Verdict{Status: metav1.ConditionUnknown, Reason: api.ClusterPausedReason,
		Message: "waiting: Cluster " + strings.Join(sorted(f.PausedClusters), ", ") + " is paused"}, true
}

// GateHelmInFlight waits while Helm is acting on the release: storage holds
// a pending-* release, or a version newer than the one status.history
// names. helm-controller records history only after Helm's apply and wait
// (or its rollback), so in that window the history still names the
// previous release, while Helm already writes the new manifest's objects:
// correcting them to the old manifest would fight Helm. A failed release
// with nothing pending passes: healing it lets helm-controller's retry pass.
func GateHelmInFlight(f Facts) (Verdict, bool) {
	// Only the newest version counts: Helm acts on the newest one, and an
	// older version left pending by a crashed upgrade stays pending after
	// `helm rollback` (which supersedes only deployed versions).
	var newest *StoredRelease
	for i := range f.Stored {
		if s := &f.Stored[i]; newest == nil || s.Version > newest.Version {
			newest = s
		}
	}
	switch {
	case newest == nil:
		return Verdict{}, false
	case IsPendingStatus(newest.Status):
		return inFlight(fmt.Sprintf("v%d is %s in storage", newest.Version, newest.Status)), true
	case f.HistoryVersion > 0 && newest.Version > f.HistoryVersion:
		return inFlight(fmt.Sprintf("storage holds v%d (%s), newer than v%d in status.history",
			newest.Version, newest.Status, f.HistoryVersion)), true
	}
	return Verdict{}, false
}

// HelmInFlight reports whether v is GateHelmInFlight's: the pass waits
// because Helm is acting on the release.
func HelmInFlight(v *Verdict) bool {
	return v != nil && v.Reason == api.ReleaseInProgressReason
}

func inFlight(detail string) Verdict {
	return Verdict{Status: metav1.ConditionUnknown, Reason: api.ReleaseInProgressReason,
		Message: "waiting: Helm is acting on the release: " + detail}
}

// IsPendingStatus reports whether a Helm release status says Helm is still
// writing that release (pending-install, pending-upgrade, pending-rollback).
func IsPendingStatus(status string) bool {
	switch status {
	case "pending-install", "pending-upgrade", "pending-rollback":
		return true
	}
	return false
}

// GateRotateUndone refuses an explicit rotate that Helm undoes: under
// server-side apply every upgrade re-applies each consumer in full, and
// helm-controller drift correction patches every drifted field, so both
// set a repointed reference back to the manifest's name. The add-on would
// repoint it again, and each flip rolls machines. auto picks recreate
// there for the same reason.
func GateRotateUndone(f Facts) (Verdict, bool) {
	if f.Options.Strategy != StrategyRotate || !f.Helm.HelmReassertsReferences() {
		return Verdict{}, false
	}
	why, out := whys(f.Helm), waysOutOf(f.Helm)
	msg := fmt.Sprintf("%s: annotation %s=%q cannot work with this release: %s, and each flip rolls machines; use strategy auto (which recreates a locked template nothing uses, and reports CorrectionBlocked for one in use), or %s",
		ErrInvalidConfiguration, api.StrategyAnnotation, StrategyRotate, strings.Join(why, "; "), strings.Join(out, " and "))
	return Verdict{Status: metav1.ConditionFalse, Reason: api.InvalidConfigurationReason, Message: msg}, true
}

// GateClusterUnavailable waits while a Cluster the release renders does not
// exist live or is being deleted. That is the source cluster after
// `clusterctl move`, or a cluster being torn down: its templates are gone or
// going, and creating them again from the manifest would leave orphans with
// no Cluster to own them.
func GateClusterUnavailable(f Facts) (Verdict, bool) {
	if len(f.MissingClusters)+len(f.DeletingClusters) == 0 {
		return Verdict{}, false
	}
	var parts []string
	for _, n := range sorted(f.MissingClusters) {
		parts = append(parts, "Cluster "+n+" does not exist")
	}
	for _, n := range sorted(f.DeletingClusters) {
		parts = append(parts, "Cluster "+n+" is being deleted")
	}
	return Verdict{Status: metav1.ConditionUnknown, Reason: api.ClusterUnavailableReason,
		Message: "waiting: " + strings.Join(parts, "; ")}, true
}

// GateObjectPaused waits while a template or consumer of the release
// carries the cluster.x-k8s.io/paused annotation: Cluster API's own
// controllers leave such an object alone, and so does the add-on.
func GateObjectPaused(f Facts) (Verdict, bool) {
	if len(f.PausedObjects) == 0 {
		return Verdict{}, false
	}
	return Verdict{Status: metav1.ConditionUnknown, Reason: api.ClusterPausedReason,
		Message: "waiting: " + strings.Join(sorted(f.PausedObjects), ", ") + " is paused"}, true
}

// sorted returns a sorted copy, leaving the gathered facts as they are.
func sorted(in []string) []string {
	out := append([]string(nil), in...)
	sort.Strings(out)
	return out
}
