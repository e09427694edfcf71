package plan

import (
	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// DryRun is the API server's answer to an in-place correction tried with
// dryRun=All, which runs validation, CEL rules and admission webhooks.
type DryRun string

const (
	// DryRunNotRun means no dry-run was needed (an explicit rotate or recreate).
	DryRunNotRun DryRun = ""
	// DryRunAccepted means the server accepts the change in place.
	DryRunAccepted DryRun = "Accepted"
	// DryRunLocked means the server refused the change as Invalid: the template
	// (or the drifted field) is immutable.
	DryRunLocked DryRun = "Locked"
	// DryRunFailed means any other answer about the object: forbidden (the
	// identity's rights, or an admission webhook or policy that denies the
	// change), or a bad request.
	DryRunFailed DryRun = "Failed"
)

// InPlaceDryRun decides what the server's answer to an in-place dry-run
// means, with ClassifyError's one classification: accepted; locked when it
// refuses the change as Invalid; failed for any other answer about the
// object (IsRefusal). Any other error (a 5xx, a 429, a timeout, a template
// gone since it was read) says nothing about the change: retry is true,
// and the pass fails and is retried with back-off, as when the dry-run
// create that confirms drift gets no answer (UnconfirmedDrift), rather
// than report a correction failed for a transient error.
func InPlaceDryRun(err error) (answer DryRun, retry bool) {
	switch {
	case err == nil:
		return DryRunAccepted, false
	case apierrors.IsInvalid(err):
		return DryRunLocked, false
	case IsRefusal(err):
		return DryRunFailed, false
	}
	return "", true
}

// ApplyMethod is how Helm applies a release's objects (Helm v4's
// apply_method of a stored release).
type ApplyMethod string

const (
	// ApplyServerSide means every upgrade applies each object in full,
	// with server-side apply.
	ApplyServerSide ApplyMethod = "ssa"
	// ApplyClientSide means an upgrade patches what changed between the
	// previous manifest and this one (three-way merge).
	ApplyClientSide ApplyMethod = "csa"
	// ApplyUnknown is a release Helm 3 wrote, which records no method
	// (client-side).
	ApplyUnknown ApplyMethod = ""
)

// HelmFacts are the facts about how Helm will treat the release's objects
// next time it applies them.
type HelmFacts struct {
	// ApplyMethod is how the next upgrade applies (HelmFactsOf).
	ApplyMethod ApplyMethod
	// DriftDetectionEnabled is true when the HelmRelease's
	// spec.driftDetection.mode is "enabled", so helm-controller corrects
	// references back to the manifest on its own.
	DriftDetectionEnabled bool
}

// HelmFactsOf says how Helm will apply the release's objects next time:
// as spec.upgrade.serverSideApply says when it is enabled or disabled, as
// the stored release was applied when it is auto (helm-controller's
// default).
func HelmFactsOf(hr *helmv2.HelmRelease, stored ApplyMethod) HelmFacts {
	method := stored
	switch hr.GetUpgrade().ServerSideApply {
	case helmv2.ServerSideApplyEnabled:
		method = ApplyServerSide
	case helmv2.ServerSideApplyDisabled:
		method = ApplyClientSide
	}
	return HelmFacts{ApplyMethod: method, DriftDetectionEnabled: hr.GetDriftDetection().GetMode() == helmv2.DriftDetectionEnabled}
}

// HelmReassertsReferences reports whether Helm would set a repointed
// consumer reference back to the manifest's.
func (h HelmFacts) HelmReassertsReferences() bool {
	return len(h.reassertions()) > 0
}

// reassertion is one way Helm sets a repointed reference back, and what
// the user can change so that it does not.
type reassertion struct{ why, wayOut string }

// reassertions are the ways Helm would set a repointed reference back: a
// server-side-apply release re-applies every object in full, and
// helm-controller drift correction patches every drifted field. Every
// message that explains why a rotation would not stick says it with these
// words.
func (h HelmFacts) reassertions() []reassertion {
	var out []reassertion
	if h.ApplyMethod == ApplyServerSide {
		out = append(out, reassertion{
			why:    "the release is applied with server-side apply, so Helm sets every repointed reference back on each upgrade",
			wayOut: "upgrade with client-side apply (spec.upgrade.serverSideApply: disabled)",
		})
	}
	if h.DriftDetectionEnabled {
		out = append(out, reassertion{
			why:    "helm-controller drift detection is enabled, so it sets every repointed reference back when it corrects drift",
			wayOut: "set spec.driftDetection.mode to warn",
		})
	}
	return out
}

// NeedsDryRun reports whether the strategy has to ask the server first.
func NeedsDryRun(requested Strategy) bool {
	return requested == StrategyAuto || requested == StrategyInPlace
}

// Choose picks the strategy for one drifted template that exists live.
// The second result is false when no strategy can be used (the in-place
// change was refused and the user asked for in-place only, or the dry-run
// failed for another reason); the caller reports the server's message.
//
//   - in-place where the server accepts the change: nothing rolls;
//   - for a locked template, rotate when Helm will not reassert references;
//   - recreate otherwise, because Helm would set a rotation back and a
//     still-drifted locked original fails every server-side-apply upgrade.
func Choose(requested Strategy, dry DryRun, helm HelmFacts) (Strategy, bool) {
	switch requested {
	case StrategyRotate, StrategyRecreate:
		return requested, true
	case StrategyInPlace:
		return StrategyInPlace, dry == DryRunAccepted
	}
	switch dry {
	case DryRunAccepted:
		return StrategyInPlace, true
	case DryRunLocked:
		if helm.HelmReassertsReferences() {
			return StrategyRecreate, true
		}
		return StrategyRotate, true
	default:
		return "", false
	}
}

// Lasting reports whether the server's answer to an in-place dry-run says
// something that holds for the same request later: accepted and locked
// do; any other refusal (forbidden, a webhook that failed) may be gone on
// the next pass, so it is asked again then.
func (d DryRun) Lasting() bool {
	return d != DryRunFailed
}
