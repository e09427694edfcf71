package framework

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	eventv1 "github.com/fluxcd/pkg/apis/event/v1"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
)

// TestEventReceiver: a POSTed event is recorded as sent; anything else is
// refused, so that notification-controller logs the failure.
func TestEventReceiver(t *testing.T) {
	g := NewWithT(t)
	r := StartEventReceiver()
	defer r.Close()
	sent := eventv1.Event{InvolvedObject: corev1.ObjectReference{Kind: "HelmRelease", Namespace: "fleet", Name: "cluster"},
		Reason: "TemplateDriftCorrected", Metadata: map[string]string{"helm.toolkit.fluxcd.io/revision": "1.0.0"}}
	body, err := json.Marshal(sent)
	g.Expect(err).NotTo(HaveOccurred())
	resp, err := http.Post(r.URL, "application/json", bytes.NewReader(body))
	g.Expect(err).NotTo(HaveOccurred())
	_ = resp.Body.Close()
	g.Expect(resp.StatusCode).To(Equal(http.StatusAccepted))

	resp, err = http.Post(r.URL, "application/json", bytes.NewReader([]byte("not json")))
	g.Expect(err).NotTo(HaveOccurred())
	_ = resp.Body.Close()
	g.Expect(resp.StatusCode).To(Equal(http.StatusBadRequest))
	resp, err = http.Get(r.URL)
	g.Expect(err).NotTo(HaveOccurred())
	_ = resp.Body.Close()
	g.Expect(resp.StatusCode).To(Equal(http.StatusBadRequest))

	got := r.Events()
	g.Expect(got).To(HaveLen(1))
	g.Expect(got[0].Reason).To(Equal(sent.Reason))
	g.Expect(got[0].InvolvedObject).To(Equal(sent.InvolvedObject))
	g.Expect(got[0].Metadata).To(Equal(sent.Metadata))
}
