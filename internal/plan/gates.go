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
	// PausedClusters names the release's Clusters that are paused.
	PausedClusters []string
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

// Gates is the ordered chain every pass runs before any template is read.
var Gates = append(append([]Gate{}, ObjectGates...), GateRelease, GatePaused)

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
// apply, and healing its templates lets helm-controller's retry pass.
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
	names := append([]string(nil), f.PausedClusters...)
	sort.Strings(names)
	return Verdict{Status: metav1.ConditionUnknown, Reason: api.ClusterPausedReason,
		Message: "waiting: Cluster " + strings.Join(names, ", ") + " is paused"}, true
}
