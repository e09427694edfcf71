// Package api holds the names that are this add-on's public contract: the
// annotations users and the controller put on objects, the HelmRelease
// condition type and its reasons, and the event reasons. They are constants
// in one leaf package so that docs, controller and tests cannot disagree;
// EventReason, the one function, derives the event reasons of the
// condition reasons that have no event of their own.
package api

// Annotations and labels read from a HelmRelease.
const (
	// ModeAnnotation opts a HelmRelease in: "enabled" detects and corrects,
	// "warn" only reports, "disabled" (or absent) does nothing.
	ModeAnnotation = "templatedrift.io/mode"
	// StrategyAnnotation picks how drifted templates are corrected: "auto"
	// (default), "in-place", "rotate" or "recreate".
	StrategyAnnotation = "templatedrift.io/strategy"
	// PruneAnnotation set to "disabled" turns off the clean-up of unused
	// replacements the add-on created for the release; "enabled" (or
	// absent) keeps it on.
	PruneAnnotation = "templatedrift.io/prune"
	// RolloutsAnnotation says whether a correction that rolls Machines (a
	// repointed MachineDeployment, MachinePool or control plane) is made
	// on its own ("allow") or waits for an approval ("deny"); absent, the
	// controller's --rollouts flag decides.
	RolloutsAnnotation = "templatedrift.io/rollouts"
	// ApproveRolloutAnnotation approves the waiting rollouts whose ids it
	// lists, separated by commas. Each id is bound to what its rollout
	// writes: an id that no longer matches approves nothing.
	ApproveRolloutAnnotation = "templatedrift.io/approve-rollout"
)

// Values of RolloutsAnnotation.
const (
	RolloutsDeny  = "deny"
	RolloutsAllow = "allow"
)

// RolloutsMadeAnnotation on a consumer (a MachineDeployment, MachinePool or
// control plane) lists, newest first, the ids of the rollouts the add-on
// made on it, written in the same patch as the repoint. A made id is
// reported as done, and a consumer set back since gets a new id: one
// approval rolls Machines once.
const RolloutsMadeAnnotation = "templatedrift.io/rollouts-made"

// Annotations read from, or written to, templates.
const (
	// IgnoreAnnotation set to "true" on a template, as an annotation or a
	// label, opts it out.
	IgnoreAnnotation = "templatedrift.io/ignore"
	// ReplacesAnnotation on a rotated replacement names the original template.
	ReplacesAnnotation = "templatedrift.io/replaces"
	// SupersededByAnnotation on an original template names its replacement.
	SupersededByAnnotation = "templatedrift.io/superseded-by"
	// SourceReleaseAnnotation records the release (<ns>/<name>.v<N>) whose
	// manifest a replacement or recreated template was built from.
	SourceReleaseAnnotation = "templatedrift.io/source-release"
	// CorrectionAnnotation records how the add-on last corrected a template
	// under its own name ("in-place" or "recreate"), next to
	// SourceReleaseAnnotation. Later passes read the pair to report the
	// correction from the world, not from their own previous condition.
	CorrectionAnnotation = "templatedrift.io/correction"
	// CorrectedDriftAnnotation records, next to CorrectionAnnotation, a
	// digest (12 hex of sha256) of the difference the add-on corrected. A
	// later pass for the same release that finds the same difference again
	// reports CorrectionFailed and writes nothing: the server does not keep
	// the value, and correcting it again would repeat forever.
	CorrectedDriftAnnotation = "templatedrift.io/corrected-drift"
)

// ControllerName is the one name used as field manager, event source,
// leader-election ID and the value of the add-on's move block. (The
// metrics' prefix is templatedrift_.)
const ControllerName = "template-drift-controller"

// Modes of ModeAnnotation.
const (
	ModeEnabled  = "enabled"
	ModeWarn     = "warn"
	ModeDisabled = "disabled"
)

// Strategies of StrategyAnnotation.
const (
	StrategyAuto     = "auto"
	StrategyInPlace  = "in-place"
	StrategyRotate   = "rotate"
	StrategyRecreate = "recreate"
)

// TemplatesInSyncCondition is the HelmRelease condition this add-on owns. It
// never writes helm-controller's conditions.
const TemplatesInSyncCondition = "TemplatesInSync"

// Condition reasons of TemplatesInSyncCondition.
const (
	// NoDriftDetectedReason: every template matches the release manifest.
	NoDriftDetectedReason = "NoDriftDetected"
	// DriftCorrectedReason: drifted templates were corrected; the message
	// lists template, strategy and whether machines roll.
	DriftCorrectedReason = "DriftCorrected"
	// DriftDetectedReason: drift is reported but not corrected (warn mode, or
	// a correction that has to wait).
	DriftDetectedReason = "DriftDetected"
	// CorrectionFailedReason: a correction was refused or failed.
	CorrectionFailedReason = "CorrectionFailed"
	// ReleaseUnavailableReason: the stored release is missing, corrupt, in a
	// status the add-on does not act on (neither deployed nor failed), or
	// does not match the HelmRelease history, or Helm storage cannot be
	// listed; the add-on waits.
	ReleaseUnavailableReason = "ReleaseUnavailable"
	// ReleaseInProgressReason: Helm is acting on the release (storage holds
	// a pending-* release, or one newer than status.history names, which
	// helm-controller records only after Helm's apply and wait). Helm's own
	// writes to the templates happen in that window, so the add-on writes
	// nothing and waits.
	ReleaseInProgressReason = "ReleaseInProgress"
	// ClusterUnavailableReason: a Cluster the release renders does not exist
	// live (moved away by clusterctl move, or deleted) or is being deleted;
	// nothing is written, so no template is created without its Cluster.
	ClusterUnavailableReason = "ClusterUnavailable"
	// ClusterPausedReason: an owning Cluster is paused, or a template or
	// consumer of the release carries the cluster.x-k8s.io/paused
	// annotation; nothing is written. A paused Cluster that carries the
	// add-on's move block (BlockMoveAnnotation) does not count: it was
	// paused during a correction, which the pass finishes.
	ClusterPausedReason = "ClusterPaused"
	// CorrectionBlockedReason: a drifted template cannot be corrected in a
	// way that sticks: the server refuses the change in place, a recreate
	// cannot complete (the template is in use, or a finalizer holds it) and
	// Helm would set a rotation back (server-side apply, or helm-controller
	// drift correction), or an explicit recreate cannot complete. Nothing is
	// written for it; the message names what holds it and the ways out.
	CorrectionBlockedReason = "CorrectionBlocked"
	// InvalidConfigurationReason: an annotation of the add-on, or a reference
	// in the release, is invalid, or the strategy cannot work with how Helm
	// applies the release (rotate under server-side apply or drift
	// correction); nothing is written.
	InvalidConfigurationReason = "InvalidConfiguration"
	// AccessDeniedReason: the identity the pass acts as (the impersonated
	// service account, or the controller) may not read an object the
	// release names, such as a template placed in another tenant's
	// namespace; nothing is written. The message is the API server's
	// refusal, naming the identity.
	AccessDeniedReason = "AccessDenied"
	// OwnershipConflictReason: the release's manifest names a template or
	// consumer whose live object another Helm release owns (its
	// meta.helm.sh/release-name and -namespace annotations name that
	// release), as a forged or stale release would; Helm itself refuses to
	// take such an object over. Nothing is written to it; the other
	// templates are corrected as usual. The message names the objects and
	// their owners.
	OwnershipConflictReason = "OwnershipConflict"
	// RolloutAwaitingApprovalReason: a correction would roll Machines and
	// the release's rollout policy is deny; nothing is written for it until
	// its id is approved. The other corrections are made. The message names
	// each waiting correction, its consumers, their Machines, its id and
	// the approve command.
	RolloutAwaitingApprovalReason = "RolloutAwaitingApproval"
	// RolloutBudgetExhaustedReason: a rollout may be made (allowed or
	// approved) but as many releases as --max-concurrent-rollouts allows
	// have a rollout of the add-on in progress; it starts when one ends.
	RolloutBudgetExhaustedReason = "RolloutBudgetExhausted"
)

// Event reasons, on the HelmRelease. Every one starts with
// EventReasonPrefix.
const (
	// TemplateDriftDetectedEvent (Warning): drift found and not corrected.
	TemplateDriftDetectedEvent = "TemplateDriftDetected"
	// TemplateDriftCorrectedEvent (Normal): drift corrected.
	TemplateDriftCorrectedEvent = "TemplateDriftCorrected"
	// TemplateDriftCorrectionFailedEvent (Warning): a correction failed.
	TemplateDriftCorrectionFailedEvent = "TemplateDriftCorrectionFailed"
	// TemplateReferenceRevertedEvent (Warning): a consumer pointed at a
	// superseded template again (Helm set the reference back) and was repointed.
	TemplateReferenceRevertedEvent = "TemplateReferenceReverted"
	// TemplateCorrectionBlockedEvent (Warning): a correction cannot stick
	// and nothing was written (CorrectionBlockedReason).
	TemplateCorrectionBlockedEvent = "TemplateCorrectionBlocked"
	// TemplateOwnershipConflictEvent (Warning): the manifest names objects
	// of another Helm release, and nothing was written to them
	// (OwnershipConflictReason).
	TemplateOwnershipConflictEvent = "TemplateOwnershipConflict"
	// TemplatePrunedEvent (Normal): unused replacements the add-on created
	// for the release were deleted.
	TemplatePrunedEvent = "TemplatePruned"
	// TemplateRolloutAwaitingApprovalEvent (Warning): corrections wait for
	// an approval of their rollout (RolloutAwaitingApprovalReason).
	TemplateRolloutAwaitingApprovalEvent = "TemplateRolloutAwaitingApproval"
)

// EventReasonPrefix starts the reason of every event of the add-on. The
// add-on's events are on the HelmRelease, next to helm-controller's, and
// forwarded by the same Flux Alerts: without it a reason such as
// AccessDenied or ReleaseUnavailable would read like one of
// helm-controller's in `flux events`, and an Alert's filters could not
// tell them apart.
const EventReasonPrefix = "Template"

// EventReason returns the reason of the event that tells a pass ended
// with condition reason conditionReason when that reason has no event of
// its own above: a verdict (a gate, or an error, stopped the pass) and
// RolloutBudgetExhaustedReason. It is EventReasonPrefix and the condition
// reason, as each constant below is; the reporter names these events
// through it alone.
func EventReason(conditionReason string) string {
	return EventReasonPrefix + conditionReason
}

// Event reasons of the passes EventReason names, each EventReasonPrefix
// and the condition reason its event tells.
const (
	// TemplateAccessDeniedEvent (Warning): a read or list of the pass was
	// refused (AccessDeniedReason).
	TemplateAccessDeniedEvent = EventReasonPrefix + AccessDeniedReason
	// TemplateInvalidConfigurationEvent (Warning): an annotation, a
	// reference or the strategy is invalid (InvalidConfigurationReason).
	TemplateInvalidConfigurationEvent = EventReasonPrefix + InvalidConfigurationReason
	// TemplateReleaseUnavailableEvent (Warning): the stored release cannot
	// be used, or the target cannot be reached (ReleaseUnavailableReason).
	TemplateReleaseUnavailableEvent = EventReasonPrefix + ReleaseUnavailableReason
	// TemplateReleaseInProgressEvent (Normal): Helm is acting on the
	// release (ReleaseInProgressReason).
	TemplateReleaseInProgressEvent = EventReasonPrefix + ReleaseInProgressReason
	// TemplateClusterUnavailableEvent (Warning): a Cluster of the release is
	// missing or being deleted (ClusterUnavailableReason).
	TemplateClusterUnavailableEvent = EventReasonPrefix + ClusterUnavailableReason
	// TemplateClusterPausedEvent (Normal): a Cluster, template or consumer
	// of the release is paused (ClusterPausedReason).
	TemplateClusterPausedEvent = EventReasonPrefix + ClusterPausedReason
	// TemplateRolloutBudgetExhaustedEvent (Normal): a rollout waits for the
	// rollout budget (RolloutBudgetExhaustedReason).
	TemplateRolloutBudgetExhaustedEvent = EventReasonPrefix + RolloutBudgetExhaustedReason
)

// Helm and Cluster API names the add-on reads.
const (
	HelmReleaseNameAnnotation      = "meta.helm.sh/release-name"
	HelmReleaseNamespaceAnnotation = "meta.helm.sh/release-namespace"
	HelmManagedByLabel             = "app.kubernetes.io/managed-by"
	FluxDriftDetectionKey          = "helm.toolkit.fluxcd.io/driftDetection"
	TopologyOwnedLabel             = "topology.cluster.x-k8s.io/owned"
	ClusterPausedAnnotation        = "cluster.x-k8s.io/paused"
	// BlockMoveAnnotation on any object of a move's scope makes
	// `clusterctl move` wait, after it has paused the Clusters, until the
	// annotation is gone. The add-on sets it on a Cluster, with the value
	// ControllerName, for the length of a pass that makes more than one
	// write in the Cluster's namespace, and removes only its own.
	BlockMoveAnnotation = "clusterctl.cluster.x-k8s.io/block-move"
)
