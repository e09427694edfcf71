package controllers_test

import (
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/testenv"
)

// store writes a release version with Helm's storage driver, as Helm does
// while it acts, and does not record it in status.history: helm-controller
// records history only after Helm's apply and wait.
func (w *world) store(version int, status string, v values) testenv.Release {
	w.t.Helper()
	rel := testenv.Release{Name: "cluster", Namespace: w.ns, Version: version, Status: status, ApplyMethod: "csa", Manifest: render(v)}
	w.g.Expect(testenv.StoreRelease(w.ctx, env, rel)).To(Succeed())
	return rel
}

// record writes rel into status.history, as helm-controller does once Helm
// has finished.
func (w *world) record(rel testenv.Release) {
	w.t.Helper()
	w.g.Expect(testenv.SetHistory(w.ctx, env.Client, w.freshHR(), rel)).To(Succeed())
	w.rel = rel
}

// update edits a live object and writes it, retrying on conflicts: the
// real Cluster API and Metal3 controllers write these objects too.
func (w *world) update(apiVersion, kind, name string, edit func(*unstructured.Unstructured)) {
	w.t.Helper()
	w.g.Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		o := w.get(apiVersion, kind, name)
		edit(o)
		return w.tgt.Client.Update(w.ctx, o)
	})).To(Succeed())
}

// helmApplies sets both Metal3MachineTemplates to v's image, as Helm's
// apply of a release rendered from v does.
func (w *world) helmApplies(v values) {
	w.t.Helper()
	for _, name := range []string{"mgmt-md0", "mgmt-cp"} {
		w.update(m3, "Metal3MachineTemplate", name, func(o *unstructured.Unstructured) {
			w.g.Expect(unstructured.SetNestedField(o.Object, v.ImageURL, "spec", "template", "spec", "image", "url")).To(Succeed())
			w.g.Expect(unstructured.SetNestedField(o.Object, v.ImageURL+".sha256sum", "spec", "template", "spec", "image", "checksum")).To(Succeed())
		})
	}
}

// expectImages checks the image URL of both Metal3MachineTemplates.
func (w *world) expectImages(url string) {
	w.t.Helper()
	for _, name := range []string{"mgmt-md0", "mgmt-cp"} {
		w.g.Expect(str(w.get(m3, "Metal3MachineTemplate", name), "spec", "template", "spec", "image", "url")).To(Equal(url), name)
	}
}

// expectWaiting checks the pass reported an Unknown wait with reason and a
// message containing msg, with one event of type eventType.
func (w *world) expectWaiting(reason, msg, eventType string) {
	w.t.Helper()
	cond := w.condition()
	w.g.Expect(cond).NotTo(BeNil())
	w.g.Expect(cond.Status).To(Equal(metav1.ConditionUnknown))
	w.g.Expect(cond.Reason).To(Equal(reason))
	w.g.Expect(cond.Message).To(ContainSubstring(msg))
	w.g.Expect(w.events()).To(ConsistOf(HavePrefix(eventType + " " + api.EventReason(reason))))
}

// TestHelmInFlight drives a real upgrade window. v1 (bootstrap image) is
// deployed and named by history; Helm then stores v2 (management image)
// as pending-upgrade and applies its templates, while history still names
// v1. The add-on must leave Helm's work alone until helm-controller records
// v2, and then find the release in sync.
//
// Before this change, the code, in the pending window, compares the v2 templates with v1's
// manifest (the history's release, still deployed) and sets both
// Metal3MachineTemplates back to the bootstrap image in place: 2 writes,
// DriftCorrected, undoing the upgrade while Helm runs it. Once Helm has
// finished (v1 superseded, v2 deployed, history not written yet) it waits,
// but as ReleaseUnavailable "stored release is superseded".
func TestHelmInFlight(t *testing.T) {
	w := newWorld(t, scenario{annotations: enabled, live: bootstrap, release: bootstrap, applyMethod: "csa"})
	g := w.g
	g.Expect(w.reconcile()).To(Equal(0))
	g.Expect(reasonOf(w.condition())).To(Equal(api.NoDriftDetectedReason))
	w.events()
	v1 := w.rel

	// Helm upgrades: v2 pending in storage, its templates applied.
	w.store(2, "pending-upgrade", mgmt)
	w.helmApplies(mgmt)
	expectUntouched(w)
	w.expectImages(mgmt.ImageURL)
	w.expectWaiting(api.ReleaseInProgressReason, "waiting: Helm is acting on the release: v2 is pending-upgrade in storage", "Normal")

	// Helm has finished; helm-controller has not written history yet.
	v1.Status = "superseded"
	g.Expect(testenv.StoreRelease(w.ctx, env, v1)).To(Succeed())
	v2 := w.store(2, "deployed", mgmt)
	expectUntouched(w)
	w.expectImages(mgmt.ImageURL)
	w.expectWaiting(api.ReleaseInProgressReason, "storage holds v2 (deployed), newer than v1 in status.history", "Normal")

	// helm-controller records v2: the add-on works from it, and finds nothing to do.
	w.record(v2)
	g.Expect(w.reconcile()).To(Equal(0))
	w.expectImages(mgmt.ImageURL)
	cond := w.condition()
	g.Expect(cond.Status).To(Equal(metav1.ConditionTrue))
	g.Expect(cond.Reason).To(Equal(api.NoDriftDetectedReason))
	g.Expect(cond.Message).To(ContainSubstring(w.ns + "/cluster.v2"))
}

// TestHelmRemediationInFlight: helm-controller remediates a failed upgrade
// by rolling back. History names the failed v2 (management image); Helm
// stores v3 as pending-rollback (v1's manifest, bootstrap image) and puts
// the templates back. The add-on waits until v3 is recorded.
//
// Before this change, the code heals the failed v2 it finds in history (a failed release is
// usable): it sets both Metal3MachineTemplates to v2's management image,
// 2 writes, against the rollback Helm is making.
func TestHelmRemediationInFlight(t *testing.T) {
	w := newWorld(t, scenario{annotations: enabled, live: bootstrap, release: bootstrap, applyMethod: "csa"})
	g := w.g
	v1 := w.rel
	v1.Status = "superseded"
	g.Expect(testenv.StoreRelease(w.ctx, env, v1)).To(Succeed())
	w.helmApplies(mgmt)
	w.record(w.store(2, "failed", mgmt))
	w.events()

	w.store(3, "pending-rollback", bootstrap)
	w.helmApplies(bootstrap)
	expectUntouched(w)
	w.expectImages(bootstrap.ImageURL)
	w.expectWaiting(api.ReleaseInProgressReason, "v3 is pending-rollback in storage", "Normal")

	w.record(w.store(3, "deployed", bootstrap))
	g.Expect(w.reconcile()).To(Equal(0))
	w.expectImages(bootstrap.ImageURL)
	g.Expect(reasonOf(w.condition())).To(Equal(api.NoDriftDetectedReason))
}
