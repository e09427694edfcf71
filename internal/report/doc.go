// Package report turns a pass's result into what users see: the
// TemplatesInSync condition on the HelmRelease, events on it (which
// `flux events` lists, and which fluxcd/pkg/runtime/events forwards to
// notification-controller), and Prometheus metrics.
//
// Summarize is pure. Write is the only code that writes the condition: a
// Get, then a merge patch of status with an optimistic lock, retried on
// conflict. It never uses server-side apply on status (status.conditions is
// not a keyed list in the HelmRelease CRD) and never touches another
// condition type, so helm-controller's Ready, Released and the rest survive.
//
// An event is emitted only when the state it reports is new: a pass that
// wrote something, or a condition whose reason or message changed. A steady
// state makes no status write and no event. Events carry the metadata
// helm-controller gives its own (EventMetadata): the chart version as the
// revision, and the config digest as the token notification-controller
// deduplicates on.
package report
