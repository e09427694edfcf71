package controllers_test

import (
	"fmt"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"

	"github.com/templatedrift/template-drift-controller/api"
)

// convertedTemplates are templates written in v1beta1 on servers that store
// v1beta2 (Cluster API v1.14, CAPM3 v1.13), which do not read back as they
// were written:
//   - a Metal3DataTemplate shaped like CAPM3's own e2e templates, whose
//     default route has prefix: 0 (an omitempty int, dropped by the round
//     trip);
//   - a KubeadmConfigTemplate with durations (re-encoded "5m" → "5m0s") and
//     an empty string and list (dropped).
//
// The placeholders are filled by convertedValues.
const convertedTemplates = `---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: Metal3DataTemplate
metadata: {name: e2e-workers-metadata}
spec:
  clusterName: mgmt
  metaData:
    objectNames:
    - {key: name, object: machine}
    - {key: local-hostname, object: machine}
    strings:
    - {key: image-server, value: "IMAGE_SERVER"}
    ipAddressesFromIPPool:
    - {key: provisioningIP, name: provisioning-pool, apiGroup: ipam.metal3.io, kind: IPPool}
    prefixesFromIPPool:
    - {key: provisioningCIDR, name: provisioning-pool, apiGroup: ipam.metal3.io, kind: IPPool}
  networkData:
    links:
      ethernets:
      - type: phy
        id: enp2s0
        macAddress: {fromHostInterface: enp2s0}
    networks:
      ipv4:
      - id: baremetalv4
        link: enp2s0
        ipAddressFromIPPool: baremetalv4-pool
        routes:
        - network: 0.0.0.0
          prefix: 0
          gateway: {fromIPPool: baremetalv4-pool}
          services:
            dns: [8.8.8.8]
    services:
      dns: [8.8.4.4]
---
apiVersion: bootstrap.cluster.x-k8s.io/v1beta1
kind: KubeadmConfigTemplate
metadata: {name: kct-v1beta1}
spec:
  template:
    spec:
      clusterConfiguration:
        apiVersion: ""
      joinConfiguration:
        discovery:
          timeout: JOIN_TIMEOUT
        nodeRegistration:
          kubeletExtraArgs: {max-pods: "110"}
      preKubeadmCommands: []
      files: [{path: /etc/motd, content: hello}]
`

// convertedValues renders the chart with convertedTemplates, the image
// server IP in the Metal3DataTemplate and the join timeout given.
func convertedValues(imageServer, joinTimeout string) values {
	extra := strings.NewReplacer("IMAGE_SERVER", imageServer, "JOIN_TIMEOUT", joinTimeout).Replace(convertedTemplates)
	return values{ImageURL: mgmt.ImageURL, MetadataIP: "10.10.10.17", CPKind: "Metal3MachineTemplate", Extra: extra}
}

// TestNoDriftThatTheServerMade: templates that differ from their manifest
// only by what the real conversion webhooks do to them are in sync, in
// every mode and strategy and over several passes: no write, no event,
// NoDriftDetected (warn: no drift reported either).
func TestNoDriftThatTheServerMade(t *testing.T) {
	same := convertedValues("192.168.100.2", "5m")
	for _, tc := range []struct {
		name        string
		annotations map[string]string
		applyMethod string
	}{
		{"warn", map[string]string{api.ModeAnnotation: api.ModeWarn}, "csa"},
		{"enabled auto csa", enabled, "csa"},
		{"enabled auto ssa", enabled, "ssa"},
		{"enabled in-place", withStrategy(api.StrategyInPlace), "csa"},
		{"enabled rotate", withStrategy(api.StrategyRotate), "csa"},
		{"enabled recreate", withStrategy(api.StrategyRecreate), "ssa"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, scenario{annotations: tc.annotations, live: same, release: same, applyMethod: tc.applyMethod})
			for pass := 1; pass <= 3; pass++ {
				w.g.Expect(w.reconcile()).To(Equal(0), "pass %d writes nothing", pass)
				cond := w.condition()
				w.g.Expect(reasonOf(cond)).To(Equal(api.NoDriftDetectedReason), "pass %d: %v", pass, cond)
				w.g.Expect(w.events()).To(BeEmpty(), "pass %d", pass)
			}
			w.g.Expect(w.list(m3, "Metal3DataTemplate")).To(HaveLen(3), "nothing rotated")
		})
	}
}

// TestRealChangeInConvertedTemplates: a real change in the same templates
// is still found and corrected: the locked Metal3DataTemplate is rotated,
// the KubeadmConfigTemplate's duration patched in place; then the passes
// are quiet.
func TestRealChangeInConvertedTemplates(t *testing.T) {
	w := newWorld(t, scenario{annotations: enabled, applyMethod: "csa",
		live: convertedValues("10.10.10.17", "5m"), release: convertedValues("192.168.100.2", "10m")})
	g := w.g
	g.Expect(w.reconcile()).To(BeNumerically(">", 0))
	cond := w.condition()
	g.Expect(reasonOf(cond)).To(Equal(api.DriftCorrectedReason), cond.Message)
	g.Expect(cond.Message).To(ContainSubstring("Metal3DataTemplate/e2e-workers-metadata: rotated to e2e-workers-metadata-"))
	g.Expect(cond.Message).To(ContainSubstring("KubeadmConfigTemplate/kct-v1beta1: corrected in place"))
	// The pass that patched the duration may have lost a later write race to
	// CAPM3 (then it is retried, and its event, with the changed fields, is
	// not emitted): the corrected value is checked on the object below.
	evs := w.events()
	g.Expect(evs).To(ContainElement(ContainSubstring("KubeadmConfigTemplate/kct-v1beta1: corrected in place")))
	g.Expect(strings.Join(evs, "\n")).NotTo(ContainSubstring("prefix"), "the dropped prefix is not reported")
	g.Expect(strings.Join(evs, "\n")).NotTo(ContainSubstring("preKubeadmCommands"), "the dropped list is not reported")

	kct := w.get("bootstrap.cluster.x-k8s.io/v1beta1", "KubeadmConfigTemplate", "kct-v1beta1")
	g.Expect(str(kct, "spec", "template", "spec", "joinConfiguration", "discovery", "timeout")).To(Equal("10m0s"))
	r := expectRotated(w, m3, "Metal3DataTemplate", "e2e-workers-metadata")
	g.Expect(fmt.Sprint(r.Object["spec"])).To(ContainSubstring("192.168.100.2"))

	for pass := 1; pass <= 3; pass++ {
		g.Expect(w.reconcile()).To(Equal(0), "pass %d after the correction writes nothing", pass)
		g.Expect(reasonOf(w.condition())).To(Equal(api.DriftCorrectedReason), w.condition().Message)
		g.Expect(w.events()).To(BeEmpty())
	}
	g.Expect(w.list(m3, "Metal3DataTemplate")).To(HaveLen(4), "one replacement, no more")
}

// TestCorrectionThatDoesNotStick: a correction whose value does not stay
// (here another writer sets it back, keeping the add-on's record) is not
// written again: CorrectionFailed says the server does not keep the value,
// and later passes write nothing and repeat no event.
func TestCorrectionThatDoesNotStick(t *testing.T) {
	w := newWorld(t, scenario{annotations: enabled, live: bootstrap, release: mgmt, applyMethod: "csa"})
	g := w.g
	g.Expect(w.reconcile()).To(Equal(2))
	g.Expect(reasonOf(w.condition())).To(Equal(api.DriftCorrectedReason))
	w.events()

	g.Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		m3mt := w.get(m3, "Metal3MachineTemplate", "mgmt-md0")
		g.Expect(unstructured.SetNestedField(m3mt.Object, bootstrap.ImageURL, "spec", "template", "spec", "image", "url")).To(Succeed())
		g.Expect(unstructured.SetNestedField(m3mt.Object, bootstrap.ImageURL+".sha256sum", "spec", "template", "spec", "image", "checksum")).To(Succeed())
		return env.Client.Update(w.ctx, m3mt)
	})).To(Succeed())

	g.Expect(w.reconcile()).To(Equal(0), "the same difference is not corrected twice")
	cond := w.condition()
	g.Expect(cond.Status).To(Equal(metav1.ConditionFalse))
	g.Expect(cond.Reason).To(Equal(api.CorrectionFailedReason))
	g.Expect(cond.Message).To(ContainSubstring("Metal3MachineTemplate/mgmt-md0"))
	g.Expect(cond.Message).To(ContainSubstring("the server does not keep the value"))
	g.Expect(w.events()).To(ConsistOf(HavePrefix("Warning " + api.TemplateDriftCorrectionFailedEvent)))

	for pass := 1; pass <= 2; pass++ {
		g.Expect(w.reconcile()).To(Equal(0))
		g.Expect(w.condition().Message).To(Equal(cond.Message), "the same message on every pass")
		g.Expect(w.events()).To(BeEmpty(), "no repeated event")
	}
	g.Expect(str(w.get(m3, "Metal3MachineTemplate", "mgmt-md0"), "spec", "template", "spec", "image", "url")).To(Equal(bootstrap.ImageURL))
}
