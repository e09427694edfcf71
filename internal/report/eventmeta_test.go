package report

import (
	"context"
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/plan"
)

// The metadata keys as notification-controller reads them: the involved
// object's group, a slash, fluxcd/pkg/apis/event's key. Spelled out so a
// change of either side shows here.
const (
	revisionKey   = "helm.toolkit.fluxcd.io/revision"
	tokenKey      = "helm.toolkit.fluxcd.io/token"
	appVersionKey = "helm.toolkit.fluxcd.io/app-version"
	ociDigestKey  = "helm.toolkit.fluxcd.io/oci-digest"
)

func TestEventMetadata(t *testing.T) {
	cases := []struct {
		name string            // what the case proves
		snap *helmv2.Snapshot  // the release's status.history snapshot
		want map[string]string // the event metadata
	}{{
		name: "no snapshot: no metadata",
	}, {
		name: "chart version and config digest: revision and token",
		snap: &helmv2.Snapshot{Version: 3, ChartVersion: "1.2.0", ConfigDigest: "sha256:abc"},
		want: map[string]string{revisionKey: "1.2.0", tokenKey: "sha256:abc"},
	}, {
		name: "app version and OCI digest are added when set, as helm-controller does",
		snap: &helmv2.Snapshot{Version: 3, ChartVersion: "1.2.0", ConfigDigest: "sha256:abc", AppVersion: "v1.14.2", OCIDigest: "sha256:def"},
		want: map[string]string{revisionKey: "1.2.0", tokenKey: "sha256:abc", appVersionKey: "v1.14.2", ociDigestKey: "sha256:def"},
	}, {
		name: "neither chart version nor config digest: no metadata, as helm-controller's eventMeta",
		snap: &helmv2.Snapshot{Version: 3, AppVersion: "v1.14.2"},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			NewWithT(t).Expect(EventMetadata(tc.snap)).To(Equal(tc.want))
		})
	}
}

// annotatedEvent is one event a metaRecorder recorded.
type annotatedEvent struct {
	Type, Reason string
	Metadata     map[string]string
}

// metaRecorder records the type, reason and metadata of each event.
type metaRecorder struct{ events []annotatedEvent }

func (r *metaRecorder) AnnotatedEventf(_ runtime.Object, _ runtime.Object, annotations map[string]string, eventtype, reason, _, _ string, _ ...any) {
	r.events = append(r.events, annotatedEvent{Type: eventtype, Reason: reason, Metadata: annotations})
}

// TestWriteEventMetadata: the events of a pass carry the metadata of the
// snapshot of the release the pass read, found by version in the history
// (Helm may have moved on since), or of the latest snapshot when the pass
// read no release. Reasons are unchanged.
func TestWriteEventMetadata(t *testing.T) {
	scheme := runtime.NewScheme()
	NewWithT(t).Expect(helmv2.AddToScheme(scheme)).To(Succeed())
	v3 := &helmv2.Snapshot{Name: "cluster-a", Namespace: "fleet", Version: 3, ChartVersion: "1.3.0", ConfigDigest: "sha256:c3"}
	v2 := &helmv2.Snapshot{Name: "cluster-a", Namespace: "fleet", Version: 2, ChartVersion: "1.2.0", ConfigDigest: "sha256:c2", AppVersion: "v1"}
	cases := []struct {
		name    string            // what the case proves
		version int               // Summary.ReleaseVersion
		want    map[string]string // the metadata of the event
	}{{
		name:    "the release the pass read is the latest",
		version: 3,
		want:    map[string]string{revisionKey: "1.3.0", tokenKey: "sha256:c3"},
	}, {
		name:    "Helm upgraded since the pass read its release: the metadata names the release the message names",
		version: 2,
		want:    map[string]string{revisionKey: "1.2.0", tokenKey: "sha256:c2", appVersionKey: "v1"},
	}, {
		name:    "the pass read no release: the latest snapshot",
		version: 0,
		want:    map[string]string{revisionKey: "1.3.0", tokenKey: "sha256:c3"},
	}, {
		name:    "the release is no longer in the history: no metadata",
		version: 1,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			hr := newHelmRelease(2, ready)
			hr.Status.History = helmv2.Snapshots{v3, v2}
			c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(hr).WithStatusSubresource(&helmv2.HelmRelease{}).Build()
			rec := &metaRecorder{}
			w := &Writer{Client: c, Events: rec}
			out := Summarize(result(plan.ModeEnabled, 1, tmpl("workers", plan.OutcomeDrifted, both(inPlace, func(t *plan.TemplatePlan) {
				t.Writes = []plan.Write{plan.WritePatch}
			}))))
			out.ReleaseVersion = tc.version
			_, err := w.Write(context.Background(), client.ObjectKeyFromObject(hr), out)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(rec.events).To(Equal([]annotatedEvent{{Type: corev1.EventTypeNormal, Reason: api.TemplateDriftCorrectedEvent, Metadata: tc.want}}))
		})
	}
}

// TestSummarizeReleaseVersion: the summary names the version of the
// release the pass read, and none for a verdict reached before reading it.
func TestSummarizeReleaseVersion(t *testing.T) {
	g := NewWithT(t)
	res := result(plan.ModeEnabled, 0, tmpl("workers", plan.OutcomeInSync, nil))
	g.Expect(Summarize(res).ReleaseVersion).To(Equal(res.Release.Version))
	res.Release = nil
	res.Verdict = &plan.Verdict{Status: metav1.ConditionFalse, Reason: api.ReleaseUnavailableReason, Message: "no release"}
	g.Expect(Summarize(res).ReleaseVersion).To(BeZero())
}
