package plan

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
	// DryRunFailed means any other refusal (forbidden, webhook down, ...).
	DryRunFailed DryRun = "Failed"
)

// HelmFacts are the facts about how Helm will treat the release's objects
// next time it applies them.
type HelmFacts struct {
	// ApplyMethod is the stored release's apply_method ("ssa", "csa" or "").
	ApplyMethod string
	// DriftDetectionEnabled is true when the HelmRelease's
	// spec.driftDetection.mode is "enabled", so helm-controller corrects
	// references back to the manifest on its own.
	DriftDetectionEnabled bool
}

// HelmReassertsReferences reports whether Helm would set a repointed
// consumer reference back to the manifest's: a server-side-apply release
// re-applies every object in full, and helm-controller drift correction
// patches every drifted field.
func (h HelmFacts) HelmReassertsReferences() bool {
	return h.ApplyMethod == "ssa" || h.DriftDetectionEnabled
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
