package controllers_test

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"github.com/opencontainers/go-digest"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/release"
)

// setHistoryDigest replaces the digest of the latest snapshot of
// status.history, as helm-controller run with another
// --snapshot-digest-algo records it.
func (w *world) setHistoryDigest(d string) {
	hr := w.freshHR()
	base := hr.DeepCopy()
	hr.Status.History[0].Digest = d
	w.g.Expect(env.Client.Status().Patch(w.ctx, hr, client.MergeFrom(base))).To(Succeed())
}

// TestHistoryDigestAlgorithms: status.history digests computed with
// sha384 or sha512 (helm-controller's --snapshot-digest-algo) are verified
// with that algorithm, and the pass corrects the pivot as under sha256. A
// digest of an algorithm the add-on does not compute stops the pass with
// ReleaseUnavailable, a message that names the HelmRelease and says why,
// and its event; nothing is written.
func TestHistoryDigestAlgorithms(t *testing.T) {
	for _, algo := range []digest.Algorithm{digest.SHA384, digest.SHA512} {
		t.Run(algo.String(), func(t *testing.T) {
			w := newWorld(t, scenario{annotations: enabled, live: bootstrap, release: mgmt, applyMethod: "csa"})
			d := release.SnapshotDigestWith(w.rel.HelmRelease(), algo)
			w.g.Expect(d).To(HavePrefix(algo.String() + ":"))
			w.setHistoryDigest(d)

			w.g.Expect(w.reconcile()).To(Equal(2), "one in-place patch per Metal3MachineTemplate")
			cond := w.condition()
			w.g.Expect(cond).NotTo(BeNil())
			w.g.Expect(cond.Reason).To(Equal(api.DriftCorrectedReason), cond.Message)
		})
	}
	t.Run("sha1", func(t *testing.T) {
		w := newWorld(t, scenario{annotations: enabled, live: bootstrap, release: mgmt, applyMethod: "csa"})
		d := "sha1:" + strings.Repeat("0", 40)
		w.setHistoryDigest(d)
		expectUntouched(w)
		cond := w.condition()
		w.g.Expect(cond).NotTo(BeNil())
		w.g.Expect(cond.Status).To(Equal(metav1.ConditionUnknown))
		w.g.Expect(cond.Reason).To(Equal(api.ReleaseUnavailableReason))
		w.g.Expect(cond.Message).To(HavePrefix("HelmRelease " + w.ns + "/cluster: failed to verify release " + w.ns + "/cluster.v1 against history: "))
		w.g.Expect(cond.Message).To(ContainSubstring(`status.history digest cannot be verified: "` + d +
			`" names algorithm sha1, which the add-on does not compute (it computes sha256, sha384, sha512)`))
		w.g.Expect(w.events()).To(ConsistOf(HavePrefix("Warning " + api.TemplateReleaseUnavailableEvent)))
	})
}
