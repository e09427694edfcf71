package controllers_test

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/release"
	"github.com/templatedrift/template-drift-controller/internal/testenv"
)

func gz(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write(b)
	_ = zw.Close()
	return buf.Bytes()
}

// corruptSecret overwrites the stored release's data.release.
func (w *world) corruptSecret(data []byte) {
	s := &corev1.Secret{}
	w.g.Expect(env.Client.Get(w.ctx, client.ObjectKey{Namespace: w.ns, Name: release.SecretName("cluster", 1)}, s)).To(Succeed())
	s.Data["release"] = data
	w.g.Expect(env.Client.Update(w.ctx, s)).To(Succeed())
}

// TestBadInput: each kind of bad input gets its own reason and message, an
// event, and zero writes.
func TestBadInput(t *testing.T) {
	cases := []struct {
		name    string
		mutate  func(w *world) // breaks the world after setup
		reason  string
		message string
	}{
		{name: "bad base64", mutate: func(w *world) { w.corruptSecret([]byte("%%% not base64 %%%")) },
			reason: api.ReleaseUnavailableReason, message: "corrupt"},
		{name: "bad gzip", mutate: func(w *world) {
			w.corruptSecret([]byte(base64.StdEncoding.EncodeToString(append([]byte{0x1f, 0x8b, 0x08}, []byte("garbage")...))))
		}, reason: api.ReleaseUnavailableReason, message: "corrupt"},
		{name: "bad json", mutate: func(w *world) {
			w.corruptSecret([]byte(base64.StdEncoding.EncodeToString(gz([]byte(`{"name": "cluster", "version": `)))))
		}, reason: api.ReleaseUnavailableReason, message: "corrupt"},
		{name: "manifest does not parse", mutate: func(w *world) { w.storeAndRecord(2, "deployed", "---\napiVersion: v1\nkind: [unclosed\n") },
			reason: api.ReleaseUnavailableReason, message: "release manifest is invalid"},
		{name: "missing release", mutate: func(w *world) {
			w.g.Expect(env.Client.Delete(w.ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: release.SecretName("cluster", 1)}})).To(Succeed())
		}, reason: api.ReleaseUnavailableReason, message: "not found"},
		{name: "history does not match storage", mutate: func(w *world) {
			hr := w.freshHR()
			base := hr.DeepCopy()
			hr.Status.History[0].Digest = "sha256:" + string(bytes.Repeat([]byte("0"), 64))
			w.g.Expect(env.Client.Status().Patch(w.ctx, hr, client.MergeFrom(base))).To(Succeed())
		}, reason: api.ReleaseUnavailableReason, message: "digest"},
		{name: "oversized manifest", mutate: func(w *world) { w.r.Engine.MaxManifestBytes = 1000 },
			reason: api.ReleaseUnavailableReason, message: "too large"},
		{name: "reference into another namespace", mutate: func(w *world) {
			w.storeAndRecord(2, "deployed", render(values{ImageURL: mgmt.ImageURL, MetadataIP: "10.10.10.17", CPKind: "Metal3MachineTemplate", Extra: `---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: Metal3MachineTemplate
metadata: {name: stray}
spec:
  template:
    spec:
      image: {url: "http://192.168.100.2/x", checksum: "abc"}
      dataTemplate: {name: mgmt-md0-metadata, namespace: someone-else}
`}))
		}, reason: api.InvalidConfigurationReason, message: "another namespace"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, scenario{annotations: enabled, live: bootstrap, release: mgmt, applyMethod: "csa"})
			tc.mutate(w)
			expectUntouched(w)
			cond := w.condition()
			w.g.Expect(cond).NotTo(BeNil())
			w.g.Expect(cond.Status).NotTo(Equal(metav1.ConditionTrue))
			w.g.Expect(cond.Reason).To(Equal(tc.reason))
			w.g.Expect(cond.Message).To(ContainSubstring(tc.message))
			w.g.Expect(w.events()).To(ConsistOf(HavePrefix("Warning " + api.EventReason(tc.reason))))
		})
	}
}

func (w *world) freshHR() *helmv2.HelmRelease {
	hr := &helmv2.HelmRelease{}
	w.g.Expect(env.Client.Get(w.ctx, client.ObjectKeyFromObject(w.hr), hr)).To(Succeed())
	return hr
}

// storeAndRecord stores a new release version and records it in history,
// as helm-controller does on an upgrade.
func (w *world) storeAndRecord(version int, status, manifest string) {
	rel := testenv.Release{Name: "cluster", Namespace: w.ns, Version: version, Status: status, ApplyMethod: "csa", Manifest: manifest}
	w.g.Expect(testenv.StoreRelease(w.ctx, env, rel)).To(Succeed())
	w.g.Expect(testenv.SetHistory(w.ctx, env.Client, w.freshHR(), rel)).To(Succeed())
	w.rel = rel
}
