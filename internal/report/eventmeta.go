package report

import (
	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	eventv1 "github.com/fluxcd/pkg/apis/event/v1"
)

// Event metadata keys beyond fluxcd/pkg/apis/event's, as helm-controller
// v1.6.4 names them (internal/reconcile/release.go).
const (
	metaAppVersionKey = "app-version"
	metaOCIDigestKey  = "oci-digest"
)

// EventMetadata is the metadata helm-controller v1.6.4 attaches to its
// events about a release (eventMeta in internal/reconcile/release.go), so
// that a Flux Alert shows the add-on's events the way it shows
// helm-controller's: the chart version under the revision key, the release's
// config digest under the token key, and the app version and OCI digest when
// the snapshot has them, each key prefixed with the HelmRelease's group.
// notification-controller deduplicates events on the revision and the token
// (with the object and the message), and strips the token before it
// forwards an event. Nil when snap is nil or names neither a chart version
// nor a config digest.
func EventMetadata(snap *helmv2.Snapshot) map[string]string {
	if snap == nil || (snap.ChartVersion == "" && snap.ConfigDigest == "") {
		return nil
	}
	meta := map[string]string{}
	for key, value := range map[string]string{
		eventv1.MetaRevisionKey: snap.ChartVersion,
		eventv1.MetaTokenKey:    snap.ConfigDigest,
		metaAppVersionKey:       snap.AppVersion,
		metaOCIDigestKey:        snap.OCIDigest,
	} {
		if value != "" {
			meta[helmv2.GroupVersion.Group+"/"+key] = value
		}
	}
	return meta
}

// snapshotOf returns the snapshot in hr's history of the release version a
// pass worked from, so that an event's metadata names the release its
// message names even when Helm has moved on since; the latest snapshot
// when the pass read no release (version 0); nil when history has none.
func snapshotOf(hr *helmv2.HelmRelease, version int) *helmv2.Snapshot {
	if version == 0 {
		return hr.Status.History.Latest()
	}
	for _, s := range hr.Status.History {
		if s != nil && s.Version == version {
			return s
		}
	}
	return nil
}
